// PodMonitor (monitoring.coreos.com/v1): which Pods to scrape and how, as prometheus-operator defines it; the
// fields Capstan's Prometheus operator reads, as a CRD schema that keeps every other field, and the types it gives.
import { defineKind, type KubeObject } from "@capstan/core";
import * as Type from "typebox/type";
import { selectionProperties, targetLabelProperties } from "./monitor-spec.ts";
import {
  type ConfigResourceStatus,
  MONITORING_GROUP,
  MONITORING_VERSION,
  monitorCrd,
  scrapeEndpointProperties,
} from "./monitoring-common.ts";

const podMetricsEndpointSchema = Type.Object({
  // Wins over portNumber and targetPort.
  port: Type.Optional(Type.String({ description: "Name of the container port; wins over portNumber." })),
  portNumber: Type.Optional(
    Type.Integer({
      format: "int32",
      minimum: 1,
      maximum: 65535,
      description: "Number of the container port.",
    }),
  ),
  targetPort: Type.Optional(
    Type.Unsafe<string | number>({
      anyOf: [{ type: "integer" }, { type: "string" }],
      "x-kubernetes-int-or-string": true,
      description: "Deprecated: name or number of the container port (use port or portNumber).",
    }),
  ),
  ...scrapeEndpointProperties(),
});

/** One scraped port of the selected Pods. */
export type PodMetricsEndpoint = Type.Static<typeof podMetricsEndpointSchema>;

/** `spec` of PodMonitor (before keepUnknownFields opens it). */
export const podMonitorSpecSchema = Type.Object(
  {
    // jobLabel's default: `<namespace>/<name>` of the PodMonitor.
    ...targetLabelProperties("Pod label whose value becomes the job label."),
    podMetricsEndpoints: Type.Optional(
      Type.Array(podMetricsEndpointSchema, { description: "The ports to scrape on the selected Pods." }),
    ),
    ...selectionProperties("Which Pods to scrape."),
  },
  { description: "Which Pods to scrape and how." },
);

/**
 * `spec` of a PodMonitor: the fields this operator reads; fields of prometheus-operator's API it does not read are
 * kept as they are (the CRD preserves unknown fields).
 */
export type PodMonitorSpec = Type.Static<typeof podMonitorSpecSchema> & { [field: string]: unknown };

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
