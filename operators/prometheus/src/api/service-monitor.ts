// ServiceMonitor (monitoring.coreos.com/v1): which Services to scrape and how, as prometheus-operator defines it;
// the fields Capstan's Prometheus operator reads, as a CRD schema that keeps every other field, and the types it gives.
import { defineKind, type KubeObject } from "@capstan/core";
import * as Type from "typebox/type";
import { selectionProperties, targetLabelProperties } from "./monitor-spec.ts";
import {
  type ConfigResourceStatus,
  MONITORING_GROUP,
  MONITORING_VERSION,
  monitorCrd,
  scrapeEndpointProperties,
  tlsConfigWithFilesSchema,
} from "./monitoring-common.ts";

const endpointSchema = Type.Object({
  port: Type.Optional(Type.String({ description: "Name of the Service port; wins over targetPort." })),
  targetPort: Type.Optional(
    Type.Unsafe<string | number>({
      anyOf: [{ type: "integer" }, { type: "string" }],
      "x-kubernetes-int-or-string": true,
      description: "Name or number of the container port behind the Service.",
    }),
  ),
  ...scrapeEndpointProperties(),
  tlsConfig: Type.Optional(tlsConfigWithFilesSchema),
  bearerTokenFile: Type.Optional(
    Type.String({
      description:
        "A file in the Prometheus container holding a bearer token (deprecated: use authorization).",
    }),
  ),
});

/** One scraped port of the selected Services. */
export type Endpoint = Type.Static<typeof endpointSchema>;

/** `spec` of ServiceMonitor (before keepUnknownFields opens it). */
export const serviceMonitorSpecSchema = Type.Object(
  {
    // jobLabel's default: the Service name.
    ...targetLabelProperties("Service label whose value becomes the job label.", {
      targetLabels: Type.Optional(
        Type.Array(Type.String(), { description: "Service labels copied onto the targets." }),
      ),
    }),
    endpoints: Type.Array(endpointSchema, { description: "The ports to scrape on the selected Services." }),
    ...selectionProperties("Which Services to scrape."),
    serviceDiscoveryRole: Type.Optional(
      Type.Enum(["Endpoints", "EndpointSlice"], {
        type: "string",
        description:
          "Discover the targets from Endpoints or EndpointSlices; Capstan reads EndpointSlices either way (Kubernetes mirrors every Endpoints object into EndpointSlices: the same targets and labels).",
      }),
    ),
  },
  { description: "Which Services to scrape and how." },
);

/**
 * `spec` of a ServiceMonitor: the fields this operator reads; fields of prometheus-operator's API it does not read
 * are kept as they are (the CRD preserves unknown fields).
 */
export type ServiceMonitorSpec = Type.Static<typeof serviceMonitorSpecSchema> & { [field: string]: unknown };

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
