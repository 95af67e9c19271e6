// The Vault operator's process: wiring only. Flags (or their environment variables, which the chart sets) are
// core's operator command line (`node main.js --help` lists them: --metrics-bind-address,
// --health-probe-bind-address, --metrics-secure, --metrics-cert-dir, --leader-elect, --leader-election-id,
// --leader-election-namespace, --watch-namespace, --max-concurrent-reconciles, --log-level), plus
// --reloader-image (VAULT_OPERATOR_RELOADER_IMAGE): the image of the pods' certificate reloader sidecar, and
// --operator-image (VAULT_OPERATOR_IMAGE): the image whose Job steps the snapshot and restore Jobs run (the chart sets
// the operator's own). POD_NAME is the Lease identity.
// `node main.js vault-snapshot-save ...` and `backup-upload ...` are the steps of a VaultSnapshot's Job,
// `backup-fetch ...` and `vault-snapshot-restore ...` those of a restore Job, `backup-delete ...` the Job removing a
// deleted snapshot's file from its claim (src/snapshot/commands.ts and @capstan/backup): not the operator.
import { Client, createLogger, Manager, operatorCommandLine, shutdownSignal } from "@capstan/core";
import { DEFAULT_RELOADER_IMAGE } from "./desired/objects.ts";
import { vaultClusterCacheSelectors, vaultClusterController } from "./reconcile/controller.ts";
import { KeysKeeper } from "./reconcile/keys-keeper.ts";
import { VaultOperatorMetrics } from "./reconcile/metrics.ts";
import { DEFAULT_OPERATOR_IMAGE } from "./reconcile/restore.ts";
import { vaultSnapshotController } from "./reconcile/snapshot.ts";
import { vaultSnapshotScheduleController } from "./reconcile/snapshot-schedule.ts";

// Each Job step prints its error on stderr, which FallbackToLogsOnError makes the termination message the operator
// reports.
const jobSteps = new Map<string, () => Promise<(argv: string[]) => Promise<unknown>>>([
  ["vault-snapshot-save", async () => (await import("./snapshot/commands.ts")).vaultSnapshotSaveCommand],
  [
    "vault-snapshot-restore",
    async () => (await import("./snapshot/commands.ts")).vaultSnapshotRestoreCommand,
  ],
  ["backup-upload", async () => (await import("@capstan/backup")).backupUploadCommand],
  ["backup-fetch", async () => (await import("@capstan/backup")).backupFetchCommand],
  ["backup-delete", async () => (await import("@capstan/backup")).backupDeleteCommand],
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
    "operator-image": {
      type: "string",
      env: "VAULT_OPERATOR_IMAGE",
      default: DEFAULT_OPERATOR_IMAGE,
      description:
        "image whose vault-snapshot-save, backup-upload, backup-fetch, vault-snapshot-restore and backup-delete steps the snapshot, restore and snapshot deletion Jobs run (the operator's own image)",
    },
  },
});
const reloaderImage = cli.extra["reloader-image"]?.trim() || DEFAULT_RELOADER_IMAGE;
const operatorImage = cli.extra["operator-image"]?.trim() || DEFAULT_OPERATOR_IMAGE;
const logger = createLogger({ name: "vault-operator", level: cli.logLevel });
const mgr = new Manager({
  ...cli.manager,
  logger,
  // Cache only the operator's own Pods, claims, Services, PDBs, ConfigMaps, Secrets and Jobs.
  cacheSelectors: vaultClusterCacheSelectors(),
});
const metrics = new VaultOperatorMetrics(mgr.metrics.registry);
// An init's keys are written through a client of their own, which neither a lost Lease nor the manager's
// shutdown closes; readiness fails while any wait for their Secret.
const keys = new KeysKeeper({
  client: new Client({ metrics: mgr.metrics, userAgent: "capstan-vault-operator/keys" }),
  recorder: mgr.recorder,
  log: logger.child({ component: "keys" }),
});
mgr.addReadyCheck("unsealKeysStored", () => keys.check());
mgr.add(
  vaultClusterController({
    metrics,
    keys,
    reloaderImage,
    operatorImage,
    maxConcurrentReconciles: cli.maxConcurrentReconciles,
  }),
);
mgr.add(vaultSnapshotController({ operatorImage }));
mgr.add(vaultSnapshotScheduleController());
logger.info(
  {
    namespace: cli.watchNamespace ?? "(all)",
    leaderElect: cli.leaderElect,
    metricsSecure: cli.metricsSecure,
    reloaderImage,
    operatorImage,
  },
  "starting the Vault operator",
);
const failed = await mgr.start(shutdownSignal()).then(
  () => false,
  (err: unknown) => {
    logger.error({ err }, "Vault operator failed");
    return true;
  },
);
// Whatever ended the manager (a signal, a lost Lease, an error), an init in flight and keys not yet in their
// Secret are waited for: the process is their only holder (the kubelet's SIGKILL after the grace period is the
// one bound).
if (keys.busy()) {
  const healthPort = cli.manager.healthPort === undefined ? 8081 : cli.manager.healthPort;
  const probes =
    healthPort === null || healthPort === 0
      ? undefined
      : await keys.serveProbes(healthPort, cli.manager.bindAddress).catch((err: unknown) => {
          logger.warn({ err: String(err) }, "could not serve the probes while writing the unseal keys");
          return undefined;
        });
  const waiting = setInterval(() => {
    try {
      keys.check();
    } catch (err) {
      logger.warn({ err: String(err) }, "waiting for the unseal keys to be written before exiting");
    }
  }, 5_000);
  await keys.idle();
  clearInterval(waiting);
  await probes?.close();
}
process.exit(failed ? 1 : 0);
