// The etcd operator's process: wiring only. Flags (or their environment variables, which the chart sets) are
// core's operator command line: `node main.js --help` lists them (--metrics-bind-address,
// --health-probe-bind-address, --metrics-secure, --metrics-cert-dir, --leader-elect, --leader-election-id,
// --leader-election-namespace, --watch-namespace, --max-concurrent-reconciles, --log-level); POD_NAME is the
// Lease identity.
// `node main.js backup-upload ...` is the last step of a backup Job (src/backup/upload.ts), not the operator.
import { createLogger, Manager, operatorCommandLine, shutdownSignal } from "@capstan/core";
import { etcdClusterCacheSelectors, etcdClusterController } from "./reconcile/controller.ts";
import { EtcdOperatorMetrics } from "./reconcile/metrics.ts";

if (process.argv[2] === "backup-upload") {
  const { backupUploadCommand } = await import("./backup/upload.ts");
  await backupUploadCommand(process.argv.slice(3)).then(
    () => process.exit(0),
    (err: unknown) => {
      // FallbackToLogsOnError makes this the termination message the operator reports.
      process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}

const cli = operatorCommandLine({
  name: "etcd-operator",
  description: "Capstan's etcd operator: EtcdCluster membership, scaling, recovery and rolling upgrades.",
});
const logger = createLogger({ name: "etcd-operator", level: cli.logLevel });
const mgr = new Manager({
  ...cli.manager,
  logger,
  // Cache only the operator's own Pods, PVCs, Services and PDBs, not every one in the cluster.
  cacheSelectors: etcdClusterCacheSelectors(),
});
const metrics = new EtcdOperatorMetrics(mgr.metrics.registry);
// The NetworkPolicy of a cluster lets the operator's pods reach the client port: they are found by the chart's
// name label in the operator's namespace (POD_NAMESPACE, set by the chart; unset when run outside the cluster).
const operatorNamespace = process.env.POD_NAMESPACE;
mgr.add(
  etcdClusterController({
    metrics,
    maxConcurrentReconciles: cli.maxConcurrentReconciles,
    ...(operatorNamespace === undefined || operatorNamespace === ""
      ? {}
      : {
          operatorPods: {
            namespace: operatorNamespace,
            labels: { "app.kubernetes.io/name": "etcd-operator" },
          },
        }),
  }),
);
logger.info(
  {
    namespace: cli.watchNamespace ?? "(all)",
    leaderElect: cli.leaderElect,
    metricsSecure: cli.metricsSecure,
  },
  "starting the etcd operator",
);
await mgr.start(shutdownSignal()).catch((err: unknown) => {
  logger.error({ err }, "etcd operator failed");
  process.exit(1);
});
