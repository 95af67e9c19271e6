// The CRDs of the Prometheus operator, for `capstan crd`: its own Prometheus, and the three monitoring.coreos.com
// kinds it reads (annotated so the chart installs each only where the cluster has none).
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
