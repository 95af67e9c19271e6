// ServiceMonitor (monitoring.coreos.com/v1): which Services to scrape and how, as prometheus-operator defines it;
// the fields Capstan's Prometheus operator reads, typed, and a CRD schema that keeps every other field.
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
  type TLSConfig,
  tlsConfigSchema,
} from "./monitoring-common.ts";
import { type MonitorScrapeSettings, scrapeSettingsProperties } from "./scrape-settings.ts";

/** One scraped port of the selected Services. */
export interface Endpoint extends ScrapeEndpointCommon {
  /** Name of the Service port (`spec.ports[].name`); wins over targetPort. */
  port?: string;
  /** Name or number of the container port behind the Service. */
  targetPort?: string | number;
  tlsConfig?: TLSConfig;
  /** A file in the Prometheus container holding a bearer token (deprecated: use authorization). */
  bearerTokenFile?: string;
}

export interface ServiceMonitorSpec extends MonitorScrapeSettings {
  /** Service label whose value becomes the `job` label (default: the Service name). */
  jobLabel?: string;
  /** Service labels copied onto the targets. */
  targetLabels?: string[];
  /** Pod labels copied onto the targets. */
  podTargetLabels?: string[];
  endpoints: Endpoint[];
  /** Which Services to scrape. */
  selector: LabelSelector;
  /** Where to look for them (default: the ServiceMonitor's namespace). */
  namespaceSelector?: NamespaceSelector;
  /** Samples a scrape may return before it fails. */
  sampleLimit?: number;
  /** The protocol to assume when a target answers without a Content-Type. */
  fallbackScrapeProtocol?: ScrapeProtocol;
  /** Discovery from EndpointSlices or Endpoints; Capstan reads EndpointSlices, which Kubernetes mirrors from Endpoints. */
  serviceDiscoveryRole?: "Endpoints" | "EndpointSlice";
  /** Fields of prometheus-operator's API this operator does not read are kept as they are. */
  [field: string]: unknown;
}

export interface ServiceMonitor extends KubeObject {
  spec: ServiceMonitorSpec;
  status?: ConfigResourceStatus;
}

export const ServiceMonitorKind = defineKind<ServiceMonitor>({
  group: MONITORING_GROUP,
  version: MONITORING_VERSION,
  kind: "ServiceMonitor",
  plural: "servicemonitors",
  namespaced: true,
});

const limit = (description: string): JSONSchemaProps => ({
  type: "integer",
  format: "int64",
  minimum: 0,
  description,
});

/** `spec` of ServiceMonitor (before keepUnknownFields opens it). */
export const serviceMonitorSpecSchema: JSONSchemaProps = {
  type: "object",
  description: "Which Services to scrape and how.",
  required: ["endpoints", "selector"],
  properties: {
    jobLabel: { type: "string", description: "Service label whose value becomes the job label." },
    targetLabels: {
      type: "array",
      items: { type: "string" },
      description: "Service labels copied onto the targets.",
    },
    podTargetLabels: {
      type: "array",
      items: { type: "string" },
      description: "Pod labels copied onto the targets.",
    },
    endpoints: {
      type: "array",
      description: "The ports to scrape on the selected Services.",
      items: {
        type: "object",
        properties: {
          port: { type: "string", description: "Name of the Service port; wins over targetPort." },
          targetPort: {
            anyOf: [{ type: "integer" }, { type: "string" }],
            "x-kubernetes-int-or-string": true,
            description: "Name or number of the container port behind the Service.",
          },
          ...scrapeEndpointProperties(),
          tlsConfig: {
            ...tlsConfigSchema,
            properties: {
              ...(tlsConfigSchema.properties as Record<string, JSONSchemaProps>),
              caFile: { type: "string", description: "A CA file in the Prometheus container." },
              certFile: {
                type: "string",
                description: "A client certificate file in the Prometheus container.",
              },
              keyFile: { type: "string", description: "A client key file in the Prometheus container." },
            },
          },
          bearerTokenFile: {
            type: "string",
            description:
              "A file in the Prometheus container holding a bearer token (deprecated: use authorization).",
          },
        },
      },
    },
    selector: labelSelectorSchema("Which Services to scrape."),
    namespaceSelector: namespaceSelectorSchema,
    sampleLimit: limit("Samples a scrape may return before it fails."),
    fallbackScrapeProtocol: fallbackScrapeProtocolSchema,
    ...scrapeSettingsProperties(),
    serviceDiscoveryRole: {
      type: "string",
      enum: ["Endpoints", "EndpointSlice"],
      description:
        "Discover the targets from Endpoints or EndpointSlices; Capstan reads EndpointSlices either way (Kubernetes mirrors every Endpoints object into EndpointSlices: the same targets and labels).",
    },
  },
};

/** The ServiceMonitor CRD, installed by the chart only where the cluster has none. */
export function serviceMonitorCrd() {
  return monitorCrd({
    kind: "ServiceMonitor",
    plural: "servicemonitors",
    singular: "servicemonitor",
    shortName: "smon",
    description:
      "ServiceMonitor (prometheus-operator's API): the Services a Prometheus scrapes, selected by labels, and how. Capstan's Prometheus operator reads the fields listed here and keeps the others.",
    spec: serviceMonitorSpecSchema,
  });
}
