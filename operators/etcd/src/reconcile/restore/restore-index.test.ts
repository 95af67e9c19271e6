// The EtcdCluster controller's EtcdBackup watch, run in a manager against the in-memory API server: an EtcdBackup
// event enqueues exactly the clusters whose spec.bootstrap.restore names it (same namespace), through the index.
import { Client, Manager, silentLogger } from "@capstan/core";
import { FakeApiServer } from "@capstan/core/testing";
import { Registry } from "prom-client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type EtcdBackup, EtcdBackupKind } from "../../api/backup.ts";
import { type EtcdCluster, EtcdClusterKind } from "../../api/etcd-cluster.ts";
import { EtcdRestoreKind } from "../../api/etcd-restore.ts";
import { etcdClusterController } from "../cluster/controller.ts";
import { EtcdOperatorMetrics } from "../metrics.ts";
import { RESTORE_BACKUP_INDEX, RestoringClusters, restoreBackupKeys } from "./restore-index.ts";

const cluster = (namespace: string, name: string, backup?: string): EtcdCluster => ({
  apiVersion: EtcdClusterKind.apiVersion,
  kind: EtcdClusterKind.kind,
  metadata: { name, namespace, generation: 1 },
  spec: {
    replicas: 3,
    version: "3.6.15",
    repository: "r",
    storage: { size: "1Gi" },
    ...(backup === undefined ? {} : { bootstrap: { restore: { backup: { name: backup } } } }),
  },
});

const backup = (namespace: string, name: string, phase?: "Succeeded"): EtcdBackup => ({
  apiVersion: EtcdBackupKind.apiVersion,
  kind: EtcdBackupKind.kind,
  metadata: { name, namespace },
  spec: { clusterName: "old", destination: { pvc: { claimName: "backups" } } },
  ...(phase === undefined ? {} : { status: { phase } }),
});

/** How long a reconcile may take to show up on a loaded machine (a bound, not a timing assertion). */
const WAIT = { timeout: 30_000, interval: 20 };

describe("restoreBackupKeys", () => {
  it.each([
    [cluster("ns", "a", "b1"), ["ns/b1"]],
    [cluster("ns", "a"), []],
  ])("%#", (c, keys) => expect(restoreBackupKeys(c)).toEqual(keys));

  it("refuses to map before it is attached, saying why", () => {
    expect(() => new RestoringClusters().of(backup("ns", "b1"))).toThrow(/not attached/);
  });
});

describe("the EtcdCluster controller's EtcdBackup watch", () => {
  let server: FakeApiServer;
  let stop: AbortController;
  let running: Promise<void> | undefined;
  const seen: string[] = [];

  beforeEach(async () => {
    server = await new FakeApiServer({ kinds: [EtcdClusterKind, EtcdBackupKind, EtcdRestoreKind] }).start();
    stop = new AbortController();
    seen.length = 0;
  });
  afterEach(async () => {
    stop.abort();
    await running?.catch(() => {});
    await server.stop();
  });

  it("enqueues the clusters restoring from the backup, and no other", { timeout: 120_000 }, async () => {
    for (const c of [
      cluster("ns", "restoring", "b1"),
      cluster("ns", "also-restoring", "b1"),
      cluster("ns", "other-backup", "b2"),
      cluster("elsewhere", "same-name-elsewhere", "b1"),
      cluster("ns", "plain"),
    ]) {
      server.put(EtcdClusterKind, c);
    }
    const registry = new Registry();
    const mgr = new Manager({
      name: "test",
      client: new Client({ kubeConfig: server.kubeConfig() }),
      logger: silentLogger,
      metricsPort: null,
      healthPort: null,
    });
    const controller = etcdClusterController({
      metrics: new EtcdOperatorMetrics(registry),
      maxConcurrentReconciles: 1,
      reconcile: async (req) => {
        seen.push(`${req.namespace}/${req.name}`);
      },
    });
    mgr.add(controller);
    running = mgr.start(stop.signal);
    // Every cluster once, from the initial list.
    await vi.waitFor(() => expect(seen).toHaveLength(5), WAIT);
    seen.length = 0;

    // A backup no cluster names, then b1 succeeding: one worker takes the keys in the order they were queued, so
    // b1's clusters arriving first means the unnamed backup enqueued none.
    server.put(EtcdBackupKind, backup("ns", "unnamed"));
    server.put(EtcdBackupKind, backup("ns", "b1", "Succeeded"));
    await vi.waitFor(() => expect(seen).toHaveLength(2), WAIT);
    expect(seen.sort()).toEqual(["ns/also-restoring", "ns/restoring"]);

    seen.length = 0;
    server.put(EtcdBackupKind, backup("ns", "b2"));
    await vi.waitFor(() => expect(seen).toEqual(["ns/other-backup"]), WAIT);
    const informer = mgr.informers.informerFor(EtcdClusterKind);
    expect(informer.store.byIndex(RESTORE_BACKUP_INDEX, "elsewhere/b1").map((c) => c.metadata.name)).toEqual([
      "same-name-elsewhere",
    ]);
  });
});
