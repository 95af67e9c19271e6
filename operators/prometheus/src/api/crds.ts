// The CRDs of the Prometheus operator, for `capstan crd`: its own Prometheus, and the three monitoring.coreos.com
// kinds it reads (annotated so the chart installs each only where the cluster has none).
import type { ChartValuesSpec } from "@capstan/cli";
import type { CustomResourceDefinitionObject } from "@capstan/core";
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

/** The chart's own values, beside those of every operator chart (capstan crd writes values.schema.json). */
export const chartValues: ChartValuesSpec = {
  properties: {
    reloaderImage: {
      description:
        "Image of the Prometheus pods' configuration reloader (init container and sidecar): a busybox with sh, sha256sum, gunzip, nc, wget and timeout, which installs each configuration generation, reloads, and keeps it only if Prometheus accepted it.",
      type: "string",
      minLength: 1,
      pattern: "^[^\\s]+$",
    },
  },
};
