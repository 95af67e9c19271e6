// @capstan/prometheus-operator: the Prometheus API, the monitoring.coreos.com kinds it reads, monitor selection
// and the configuration generator (reconcile/ and main.ts come next).
export * from "./api/monitoring-common.ts";
export * from "./api/pod-monitor.ts";
export * from "./api/prometheus.ts";
export * from "./api/prometheus-rule.ts";
export * from "./api/service-monitor.ts";
export * from "./desired/assets.ts";
export * from "./desired/bindings.ts";
export * from "./desired/config.ts";
export * from "./desired/select.ts";
export * from "./desired/validate.ts";
