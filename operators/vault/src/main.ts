// The Vault operator's process: wiring only. Flags (or their environment variables, which the chart sets) are
// core's operator command line (`node main.js --help` lists them: --metrics-bind-address,
// --health-probe-bind-address, --metrics-secure, --metrics-cert-dir, --leader-elect, --leader-election-id,
// --leader-election-namespace, --watch-namespace, --max-concurrent-reconciles, --log-level), plus
// --reloader-image (VAULT_OPERATOR_RELOADER_IMAGE): the image of the pods' certificate reloader sidecar.
// POD_NAME is the Lease identity.
import { createLogger, Manager, operatorCommandLine, shutdownSignal } from "@capstan/core";
import { DEFAULT_RELOADER_IMAGE } from "./desired/objects.ts";
import { vaultClusterCacheSelectors, vaultClusterController } from "./reconcile/controller.ts";
import { VaultOperatorMetrics } from "./reconcile/metrics.ts";

const cli = operatorCommandLine({
  name: "vault-operator",
  description:
    "Capstan's Vault operator: VaultCluster init and unseal, raft-aware scaling and upgrades, TLS rotation.",
  extra: {
    "reloader-image": {
      type: "string",
      env: "VAULT_OPERATOR_RELOADER_IMAGE",
      default: DEFAULT_RELOADER_IMAGE,
      description: "image of the Vault pods' sidecar that sends SIGHUP to vault when its certificate changes",
    },
  },
});
const reloaderImage = cli.extra["reloader-image"]?.trim() || DEFAULT_RELOADER_IMAGE;
const logger = createLogger({ name: "vault-operator", level: cli.logLevel });
const mgr = new Manager({
  ...cli.manager,
  logger,
  // Cache only the operator's own Pods, claims, Services, PDBs, ConfigMaps and Secrets.
  cacheSelectors: vaultClusterCacheSelectors(),
});
const metrics = new VaultOperatorMetrics(mgr.metrics.registry);
mgr.add(
  vaultClusterController({ metrics, reloaderImage, maxConcurrentReconciles: cli.maxConcurrentReconciles }),
);
logger.info(
  {
    namespace: cli.watchNamespace ?? "(all)",
    leaderElect: cli.leaderElect,
    metricsSecure: cli.metricsSecure,
    reloaderImage,
  },
  "starting the Vault operator",
);
await mgr.start(shutdownSignal()).catch((err: unknown) => {
  logger.error({ err }, "Vault operator failed");
  process.exit(1);
});
