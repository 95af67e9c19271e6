// PodMonitor (monitoring.coreos.com/v1): which Pods to scrape and how, as prometheus-operator defines it; the
// fields Capstan's Prometheus operator reads, typed, and a CRD schema that keeps every other field.
import { defineKind, type JSONSchemaProps, type KubeObject } from "@capstan/core";
import {
  type ConfigResourceStatus,
  fallbackScrapeProtocolSchema,
  type LabelSelector,
  labelSelectorSchema,
  MONITORING_GROUP,
  MONITORING_VERSION,
  monitorCrd,
  type NamespaceSelector,
  namespaceSelectorSchema,
  type ScrapeEndpointCommon,
  type ScrapeProtocol,
  scrapeEndpointProperties,
} from "./monitoring-common.ts";
import { type MonitorScrapeSettings, scrapeSettingsProperties } from "./scrape-settings.ts";

/** One scraped port of the selected Pods. */
export interface PodMetricsEndpoint extends ScrapeEndpointCommon {
  /** Name of the container port; wins over portNumber and targetPort. */
  port?: string;
  /** Number of the container port. */
  portNumber?: number;
  /** Deprecated in prometheus-operator: name or number of the container port. */
  targetPort?: string | number;
}

export interface PodMonitorSpec extends MonitorScrapeSettings {
  /** Pod label whose value becomes the `job` label (default: `<namespace>/<name>` of the PodMonitor). */
  jobLabel?: string;
  /** Pod labels copied onto the targets. */
  podTargetLabels?: string[];
  podMetricsEndpoints?: PodMetricsEndpoint[];
  /** Which Pods to scrape. */
  selector: LabelSelector;
  /** Where to look for them (default: the PodMonitor's namespace). */
  namespaceSelector?: NamespaceSelector;
  sampleLimit?: number;
  /** The protocol to assume when a target answers without a Content-Type. */
  fallbackScrapeProtocol?: ScrapeProtocol;
  /** Fields of prometheus-operator's API this operator does not read are kept as they are. */
  [field: string]: unknown;
}

export interface PodMonitor extends KubeObject {
  spec: PodMonitorSpec;
  status?: ConfigResourceStatus;
}

export const PodMonitorKind = defineKind<PodMonitor>({
  group: MONITORING_GROUP,
  version: MONITORING_VERSION,
  kind: "PodMonitor",
  plural: "podmonitors",
  namespaced: true,
});

/** `spec` of PodMonitor (before keepUnknownFields opens it). */
export const podMonitorSpecSchema: JSONSchemaProps = {
  type: "object",
  description: "Which Pods to scrape and how.",
  required: ["selector"],
  properties: {
    jobLabel: { type: "string", description: "Pod label whose value becomes the job label." },
    podTargetLabels: {
      type: "array",
      items: { type: "string" },
      description: "Pod labels copied onto the targets.",
    },
    podMetricsEndpoints: {
      type: "array",
      description: "The ports to scrape on the selected Pods.",
      items: {
        type: "object",
        properties: {
          port: { type: "string", description: "Name of the container port; wins over portNumber." },
          portNumber: {
            type: "integer",
            format: "int32",
            minimum: 1,
            maximum: 65535,
            description: "Number of the container port.",
          },
          targetPort: {
            anyOf: [{ type: "integer" }, { type: "string" }],
            "x-kubernetes-int-or-string": true,
            description: "Deprecated: name or number of the container port (use port or portNumber).",
          },
          ...scrapeEndpointProperties(),
        },
      },
    },
    selector: labelSelectorSchema("Which Pods to scrape."),
    namespaceSelector: namespaceSelectorSchema,
    sampleLimit: {
      type: "integer",
      format: "int64",
      minimum: 0,
      description: "Samples a scrape may return before it fails.",
    },
    fallbackScrapeProtocol: fallbackScrapeProtocolSchema,
    ...scrapeSettingsProperties(),
  },
};

/** The PodMonitor CRD, installed by the chart only where the cluster has none. */
export function podMonitorCrd() {
  return monitorCrd({
    kind: "PodMonitor",
    plural: "podmonitors",
    singular: "podmonitor",
    shortName: "pmon",
    description:
      "PodMonitor (prometheus-operator's API): the Pods a Prometheus scrapes, selected by labels, and how. Capstan's Prometheus operator reads the fields listed here and keeps the others.",
    spec: podMonitorSpecSchema,
  });
}
