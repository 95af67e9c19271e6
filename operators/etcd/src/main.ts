// The etcd operator's process: wiring only. Flags (or their environment variables, which the chart sets) are
// core's operator command line: `node main.js --help` lists them (--metrics-bind-address,
// --health-probe-bind-address, --metrics-secure, --metrics-cert-dir, --leader-elect, --leader-election-id,
// --leader-election-namespace, --watch-namespace, --max-concurrent-reconciles, --log-level), plus
// --backup-image (ETCD_OPERATOR_BACKUP_IMAGE): the image whose `backup-upload` subcommand the backup Jobs run (the
// chart sets the operator's own image). POD_NAME is the Lease identity.
// `node main.js backup-upload ...` is the last step of a backup Job (src/backup/upload.ts), and
// `node main.js backup-delete ...` the Job removing a deleted PVC backup's file (src/backup/delete.ts): not the operator.
import { createLogger, Manager, operatorCommandLine, shutdownSignal } from "@capstan/core";
import { etcdBackupController } from "./reconcile/backup-controller.ts";
import { etcdBackupScheduleController } from "./reconcile/backup-schedule-controller.ts";
import {
  DEFAULT_BACKUP_IMAGE,
  etcdClusterCacheSelectors,
  etcdClusterController,
} from "./reconcile/controller.ts";
import { EtcdOperatorMetrics } from "./reconcile/metrics.ts";

// `backup-download` and `restore-finish` are steps of a restore Job (src/backup/download.ts).
if (process.argv[2] === "backup-download" || process.argv[2] === "restore-finish") {
  const { backupDownloadCommand, restoreFinishCommand } = await import("./backup/download.ts");
  const command = process.argv[2] === "backup-download" ? backupDownloadCommand : restoreFinishCommand;
  await command(process.argv.slice(3)).then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
const subcommand = process.argv[2];
if (subcommand === "backup-upload" || subcommand === "backup-delete") {
  const run =
    subcommand === "backup-upload"
      ? (await import("./backup/upload.ts")).backupUploadCommand
      : (await import("./backup/delete.ts")).backupDeleteCommand;
  await run(process.argv.slice(3)).then(
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
  description:
    "Capstan's etcd operator: EtcdCluster membership, scaling, recovery and rolling upgrades; EtcdBackups and schedules.",
  extra: {
    "backup-image": {
      type: "string",
      env: "ETCD_OPERATOR_BACKUP_IMAGE",
      default: DEFAULT_BACKUP_IMAGE,
      description: "image whose `backup-upload` subcommand the backup Jobs run (the operator's own image)",
    },
  },
});
const backupImage = cli.extra["backup-image"]?.trim() || DEFAULT_BACKUP_IMAGE;
const logger = createLogger({ name: "etcd-operator", level: cli.logLevel });
const mgr = new Manager({
  ...cli.manager,
  logger,
  // Cache only the operator's own Pods (members and backup Jobs' pods), PVCs, Services, PDBs and Jobs.
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
    operatorImage: backupImage,
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
mgr.add(etcdBackupController({ operatorImage: backupImage, metrics }));
mgr.add(etcdBackupScheduleController());
logger.info(
  {
    namespace: cli.watchNamespace ?? "(all)",
    leaderElect: cli.leaderElect,
    metricsSecure: cli.metricsSecure,
    backupImage,
  },
  "starting the etcd operator",
);
await mgr.start(shutdownSignal()).catch((err: unknown) => {
  logger.error({ err }, "etcd operator failed");
  process.exit(1);
});
