// @capstan/prometheus-operator: the Prometheus API, the monitoring.coreos.com kinds it reads, monitor selection,
// the configuration generator, the objects a server owns and the controller (src/main.ts is the process).
export { crds } from "./api/crds.ts";
export * from "./api/monitoring-common.ts";
export * from "./api/pod-monitor.ts";
export * from "./api/prometheus.ts";
export * from "./api/prometheus-rule.ts";
export * from "./api/scrape-settings.ts";
export * from "./api/service-monitor.ts";
export * from "./desired/assets.ts";
export * from "./desired/bindings.ts";
export * from "./desired/config.ts";
export * from "./desired/feature-flags.ts";
export * from "./desired/file-access.ts";
export * from "./desired/generation.ts";
export * from "./desired/objects/discovery-rbac.ts";
export * from "./desired/objects/secrets.ts";
export * from "./desired/objects/services.ts";
export * from "./desired/objects/statefulset.ts";
export * from "./desired/objects.ts";
export * from "./desired/reloader.ts";
export * from "./desired/rule-file.ts";
export * from "./desired/scrape-settings.ts";
export * from "./desired/select.ts";
export * from "./desired/validate.ts";
export { prometheusCacheSelectors, prometheusController } from "./reconcile/controller.ts";
export { MONITOR_KINDS, type MonitorKind, PrometheusOperatorMetrics } from "./reconcile/metrics.ts";
export { ControllerState, type PrometheusControllerOptions, REQUEUE } from "./reconcile/options.ts";
export { reconcilePrometheus } from "./reconcile/reconcile.ts";
export {
  type GenerationVerdict,
  httpReloaderState,
  httpRuntimeInfo,
  judgeGenerations,
  judgeReloads,
  type PodGeneration,
  type PodLogClient,
  type PodRuntime,
  parseReloaderState,
  type ReloaderState,
  type ReloaderStateClient,
  type ReloadVerdict,
  type RuntimeInfo,
  type RuntimeInfoClient,
  reloadErrorFromLog,
} from "./reconcile/reload.ts";
