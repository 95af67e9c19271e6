// The Prometheus operator's process: wiring only. Flags (or their environment variables, which the chart sets) are
// core's operator command line (`node main.js --help` lists them: --metrics-bind-address,
// --health-probe-bind-address, --metrics-secure, --metrics-cert-dir, --leader-elect, --leader-election-id,
// --leader-election-namespace, --watch-namespace, --max-concurrent-reconciles, --log-level), plus
// --reloader-image (PROMETHEUS_OPERATOR_RELOADER_IMAGE): the image of the pods' config reloader sidecar.
// POD_NAME is the Lease identity.
import { createLogger, Manager, operatorCommandLine, shutdownSignal } from "@capstan/core";
import { DEFAULT_RELOADER_IMAGE } from "./desired/objects/statefulset.ts";
import { prometheusCacheSelectors, prometheusController } from "./reconcile/controller.ts";
import { PrometheusOperatorMetrics } from "./reconcile/metrics.ts";

const cli = operatorCommandLine({
  name: "prometheus-operator",
  description:
    "Capstan's Prometheus operator: Prometheus servers configured from ServiceMonitors, PodMonitors and PrometheusRules, reloaded live.",
  extra: {
    "reloader-image": {
      type: "string",
      env: "PROMETHEUS_OPERATOR_RELOADER_IMAGE",
      default: DEFAULT_RELOADER_IMAGE,
      description:
        "image of the Prometheus pods' configuration reloader (busybox): installs each configuration generation, POSTs /-/reload, keeps it only if Prometheus accepted it",
    },
  },
});
const reloaderImage = cli.extra["reloader-image"]?.trim() || DEFAULT_RELOADER_IMAGE;
const logger = createLogger({ name: "prometheus-operator", level: cli.logLevel });
const mgr = new Manager({
  ...cli.manager,
  logger,
  // Cache only the operator's own StatefulSets, Secrets and RBAC objects; Services, Pods and Namespaces are
  // cached whole, as monitors select among them.
  cacheSelectors: prometheusCacheSelectors(),
});
const metrics = new PrometheusOperatorMetrics(mgr.metrics.registry);
mgr.add(
  prometheusController({ metrics, reloaderImage, maxConcurrentReconciles: cli.maxConcurrentReconciles }),
);
logger.info(
  {
    namespace: cli.watchNamespace ?? "(all)",
    leaderElect: cli.leaderElect,
    metricsSecure: cli.metricsSecure,
    reloaderImage,
  },
  "starting the Prometheus operator",
);
await mgr.start(shutdownSignal()).catch((err: unknown) => {
  logger.error({ err }, "Prometheus operator failed");
  process.exit(1);
});
