// The etcd operator's process: wiring only. Flags (or their environment variables, which the chart sets) are
// core's operator command line: `node main.js --help` lists them (--metrics-bind-address,
// --health-probe-bind-address, --metrics-secure, --metrics-cert-dir, --leader-elect, --leader-election-id,
// --leader-election-namespace, --watch-namespace, --max-concurrent-reconciles, --log-level), plus
// --backup-image (ETCD_OPERATOR_BACKUP_IMAGE): the image whose `backup-upload` subcommand the backup Jobs run (the
// chart sets the operator's own image), and --automatic-recovery-floor-seconds
// (ETCD_OPERATOR_AUTOMATIC_RECOVERY_FLOOR_SECONDS, default 900): the least wait of spec.recovery.automatic whatever a
// cluster's afterSeconds says, so Kubernetes' node failover comes first. POD_NAME is the Lease identity.
// `node main.js backup-upload ...` is the last step of a backup Job, and `node main.js backup-delete ...` the Job
// removing a deleted PVC backup's file (both @capstan/backup's); `backup-download` and `restore-finish` the restore
// Job's (src/backup/download.ts): not the operator.
import { createLogger, Manager, operatorCommandLine, shutdownSignal } from "@capstan/core";
import { podSelectorLabels } from "./desired/network-policy.ts";
import { DEFAULT_AUTOMATIC_FLOOR_SECONDS, MIN_AUTOMATIC_AFTER_SECONDS } from "./plan/automatic-recovery.ts";
import { etcdBackupController } from "./reconcile/backup/controller.ts";
import {
  DEFAULT_BACKUP_IMAGE,
  etcdClusterCacheSelectors,
  etcdClusterController,
} from "./reconcile/cluster/controller.ts";
import { EtcdOperatorMetrics } from "./reconcile/metrics.ts";
import { etcdBackupScheduleController } from "./reconcile/schedule/controller.ts";

// The steps of the backup and restore Jobs (@capstan/backup, src/backup/): not the operator. Each prints its error on stderr, which
// FallbackToLogsOnError makes the termination message the operator reports.
const jobSteps = new Map<string, () => Promise<(argv: string[]) => Promise<unknown>>>([
  ["backup-upload", async () => (await import("@capstan/backup")).backupUploadCommand],
  ["backup-delete", async () => (await import("@capstan/backup")).backupDeleteCommand],
  ["backup-download", async () => (await import("./backup/download.ts")).backupDownloadCommand],
  ["restore-finish", async () => (await import("./backup/download.ts")).restoreFinishCommand],
]);
const step = jobSteps.get(process.argv[2] ?? "");
if (step !== undefined) {
  await (await step())(process.argv.slice(3)).then(
    () => process.exit(0),
    (err: unknown) => {
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
    "automatic-recovery-floor-seconds": {
      type: "string",
      env: "ETCD_OPERATOR_AUTOMATIC_RECOVERY_FLOOR_SECONDS",
      default: String(DEFAULT_AUTOMATIC_FLOOR_SECONDS),
      description: `least wait, in seconds (${MIN_AUTOMATIC_AFTER_SECONDS} or more), before spec.recovery.automatic recovers, whatever afterSeconds says: the cluster's node failover (eviction, volume detach) comes first`,
    },
  },
});
const backupImage = cli.extra["backup-image"]?.trim() || DEFAULT_BACKUP_IMAGE;
const floorFlag = cli.extra["automatic-recovery-floor-seconds"];
const automaticRecoveryFloorSeconds = Number(floorFlag);
if (
  !Number.isInteger(automaticRecoveryFloorSeconds) ||
  automaticRecoveryFloorSeconds < MIN_AUTOMATIC_AFTER_SECONDS
) {
  process.stderr.write(
    `--automatic-recovery-floor-seconds (ETCD_OPERATOR_AUTOMATIC_RECOVERY_FLOOR_SECONDS) must be a whole number of seconds, at least ${MIN_AUTOMATIC_AFTER_SECONDS}: got ${JSON.stringify(floorFlag)}\n`,
  );
  process.exit(2);
}
const logger = createLogger({ name: "etcd-operator", level: cli.logLevel });
const mgr = new Manager({
  ...cli.manager,
  logger,
  // Cache only the operator's own Pods (members and backup Jobs' pods), PVCs, Services, PDBs and Jobs.
  cacheSelectors: etcdClusterCacheSelectors(),
});
const metrics = new EtcdOperatorMetrics(mgr.metrics.registry);
// The NetworkPolicy of a cluster lets the operator's pods reach the client port: they are found by the chart's
// selector labels (POD_SELECTOR_LABELS, JSON) in the operator's namespace (POD_NAMESPACE); both are set by the chart
// and unset when the operator runs outside the cluster.
const operatorNamespace = process.env.POD_NAMESPACE;
const operatorLabels = podSelectorLabels(process.env.POD_SELECTOR_LABELS);
mgr.add(
  etcdClusterController({
    metrics,
    maxConcurrentReconciles: cli.maxConcurrentReconciles,
    operatorImage: backupImage,
    automaticRecoveryFloorSeconds,
    ...(operatorNamespace === undefined || operatorNamespace === ""
      ? {}
      : {
          operatorPods: {
            namespace: operatorNamespace,
            labels: operatorLabels,
          },
        }),
  }),
);
mgr.add(etcdBackupController({ operatorImage: backupImage, metrics }));
mgr.add(etcdBackupScheduleController({ metrics }));
logger.info(
  {
    namespace: cli.watchNamespace ?? "(all)",
    leaderElect: cli.leaderElect,
    metricsSecure: cli.metricsSecure,
    backupImage,
    automaticRecoveryFloorSeconds,
  },
  "starting the etcd operator",
);
await mgr.start(shutdownSignal()).catch((err: unknown) => {
  logger.error({ err }, "etcd operator failed");
  process.exit(1);
});
