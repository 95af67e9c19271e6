// The Vault operator's process: wiring only. Configuration comes from the environment (the chart sets it), as the
// etcd operator's:
//   WATCH_NAMESPACE   reconcile VaultClusters in this namespace only (namespace-scoped mode); unset/empty: all
//   LEADER_ELECT      "true" to run several replicas with one active leader (Lease in POD_NAMESPACE)
//   LEADER_ELECTION_NAME  the Lease's name (default capstan-vault-operator-leader; the chart: <release>-leader)
//   POD_NAMESPACE     the operator's own namespace (the Lease's); POD_NAME its identity and event instance
//   METRICS_PORT      /metrics (default 8080);  HEALTH_PORT  /healthz and /readyz (default 8081, plain HTTP)
//   METRICS_SECURE    default "true": /metrics over HTTPS for callers the API server authenticates and authorizes
//   METRICS_CERT_DIR  tls.crt and tls.key of the metrics server (re-read when rotated); unset: self-signed
//   LOG_LEVEL         pino level (default info);  MAX_CONCURRENT_RECONCILES (default 4)
//   VAULT_OPERATOR_RELOADER_IMAGE  or the flag --reloader-image: image of the pods' certificate reloader sidecar
//                     (default busybox:1.37)
import { parseArgs } from "node:util";
import { createLogger, Manager, shutdownSignal } from "@capstan/core";
import { DEFAULT_RELOADER_IMAGE } from "./desired/objects.ts";
import { vaultClusterCacheSelectors, vaultClusterController } from "./reconcile/controller.ts";
import { VaultOperatorMetrics } from "./reconcile/metrics.ts";

const env = process.env;
const logger = createLogger({ name: "vault-operator", level: env.LOG_LEVEL ?? "info" });
const { values: flags } = parseArgs({
  options: { "reloader-image": { type: "string" } },
  strict: true,
  allowPositionals: false,
});
const reloaderImage =
  flags["reloader-image"]?.trim() || env.VAULT_OPERATOR_RELOADER_IMAGE?.trim() || DEFAULT_RELOADER_IMAGE;
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
  name: "vault-operator",
  logger,
  ...(namespace === undefined ? {} : { namespace }),
  cacheSelectors: vaultClusterCacheSelectors(),
  ...(leaderElect
    ? {
        leaderElection: {
          namespace: podNamespace,
          name: env.LEADER_ELECTION_NAME?.trim() || "capstan-vault-operator-leader",
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
const metrics = new VaultOperatorMetrics(mgr.metrics.registry);
mgr.add(
  vaultClusterController({
    metrics,
    reloaderImage,
    maxConcurrentReconciles: Number(env.MAX_CONCURRENT_RECONCILES ?? 4),
  }),
);
logger.info(
  { namespace: namespace ?? "(all)", leaderElect, metricsSecure, reloaderImage },
  "starting the Vault operator",
);
await mgr.start(shutdownSignal()).catch((err: unknown) => {
  logger.error({ err }, "Vault operator failed");
  process.exit(1);
});
