// The etcd operator's process: wiring only. Configuration comes from the environment (the chart sets it):
//   WATCH_NAMESPACE   reconcile EtcdClusters in this namespace only (namespace-scoped mode); unset/empty: all
//   LEADER_ELECT      "true" to run several replicas with one active leader (Lease in POD_NAMESPACE)
//   LEADER_ELECTION_NAME  the Lease's name (default capstan-etcd-operator-leader; the chart: <release>-...-leader)
//   POD_NAMESPACE     the operator's own namespace (the Lease's); POD_NAME its identity and event instance
//   METRICS_PORT      /metrics (default 8080);  HEALTH_PORT  /healthz and /readyz (default 8081, plain HTTP)
//   METRICS_SECURE    default "true": /metrics over HTTPS, served only to callers the API server authenticates
//                     (TokenReview) and authorizes (get on the non-resource URL /metrics); "false": plain HTTP
//   METRICS_CERT_DIR  tls.crt and tls.key of the metrics server (re-read when rotated); unset: self-signed
//   LOG_LEVEL         pino level (default info);  MAX_CONCURRENT_RECONCILES (default 4)
import { createLogger, Manager, shutdownSignal } from "@capstan/core";
import { etcdClusterCacheSelectors, etcdClusterController } from "./reconcile/controller.ts";
import { EtcdOperatorMetrics } from "./reconcile/metrics.ts";

const env = process.env;
const logger = createLogger({ name: "etcd-operator", level: env.LOG_LEVEL ?? "info" });
const namespace = env.WATCH_NAMESPACE?.trim() || undefined;
const leaderElect = env.LEADER_ELECT === "true";
const podNamespace = env.POD_NAMESPACE?.trim() || namespace || "default";
const metricsSecureEnv = env.METRICS_SECURE?.trim() || "true";
if (metricsSecureEnv !== "true" && metricsSecureEnv !== "false") {
  logger.fatal(`METRICS_SECURE must be "true" or "false", not "${metricsSecureEnv}"`);
  process.exit(2);
}
const metricsSecure = metricsSecureEnv === "true";
const metricsCertDir = env.METRICS_CERT_DIR?.trim() || undefined;

const mgr = new Manager({
  name: "etcd-operator",
  logger,
  ...(namespace === undefined ? {} : { namespace }),
  // Cache only the operator's own Pods, PVCs, Services and PDBs, not every one in the cluster.
  cacheSelectors: etcdClusterCacheSelectors(),
  ...(leaderElect
    ? {
        leaderElection: {
          namespace: podNamespace,
          // The chart names it after the release, so two releases in one namespace do not fight over it.
          name: env.LEADER_ELECTION_NAME?.trim() || "capstan-etcd-operator-leader",
          ...(env.POD_NAME ? { identity: env.POD_NAME } : {}),
        },
      }
    : {}),
  metricsPort: Number(env.METRICS_PORT ?? 8080),
  metricsServer: {
    secure: metricsSecure,
    ...(metricsCertDir === undefined ? {} : { certDir: metricsCertDir }),
  },
  healthPort: Number(env.HEALTH_PORT ?? 8081),
});
const metrics = new EtcdOperatorMetrics(mgr.metrics.registry);
mgr.add(
  etcdClusterController({
    metrics,
    maxConcurrentReconciles: Number(env.MAX_CONCURRENT_RECONCILES ?? 4),
  }),
);
logger.info({ namespace: namespace ?? "(all)", leaderElect, metricsSecure }, "starting the etcd operator");
await mgr.start(shutdownSignal()).catch((err: unknown) => {
  logger.error({ err }, "etcd operator failed");
  process.exit(1);
});
