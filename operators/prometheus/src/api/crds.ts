// The CRDs of the Prometheus operator, for `capstan crd`: its own Prometheus, and the three monitoring.coreos.com
// kinds it reads (annotated so the chart installs each only where the cluster has none).
import type { CustomResourceDefinitionObject, JSONSchemaProps } from "@capstan/core";
import { podMonitorCrd } from "./pod-monitor.ts";
import { prometheusCrd } from "./prometheus.ts";
import { prometheusRuleCrd } from "./prometheus-rule.ts";
import { serviceMonitorCrd } from "./service-monitor.ts";

export const crds: CustomResourceDefinitionObject[] = [
  prometheusCrd(),
  serviceMonitorCrd(),
  podMonitorCrd(),
  prometheusRuleCrd(),
];

/**
 * The chart's own values, beside those of every operator chart (capstan crd writes values.schema.json). Typed with
 * core's JSONSchemaProps, not @capstan/cli's ChartValuesSpec: the operator's published types must not need its build
 * tools (@capstan/cli is a devDependency).
 */
export const chartValues: { properties: Record<string, JSONSchemaProps> } = {
  properties: {
    // An image value (registry, repository, tag, digest; or one string): capstan crd writes its schema.
    reloaderImage: {
      $ref: "#/definitions/image",
      description:
        "Image of the Prometheus pods' configuration reloader (init container and sidecar): a busybox with sh, sha256sum, gunzip, nc, wget and timeout, which installs each configuration generation, reloads, and keeps it only if Prometheus accepted it.",
    },
  },
};
