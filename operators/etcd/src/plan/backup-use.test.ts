// Which backups a restore uses or may still use.
import { describe, expect, it } from "vitest";
import type { EtcdCluster } from "../api/etcd-cluster.ts";
import type { EtcdRestore, EtcdRestorePhase } from "../api/etcd-restore.ts";
import { backupsInUse } from "./backup-use.ts";

const restore = (name: string, backup: string | undefined, phase?: EtcdRestorePhase): EtcdRestore =>
  ({
    metadata: { name, namespace: "db" },
    spec: {
      clusterName: "demo",
      from: backup === undefined ? "Survivor" : "Backup",
      ...(backup === undefined ? {} : { source: { backup: { name: backup } } }),
    },
    ...(phase === undefined ? {} : { status: { phase } }),
  }) as EtcdRestore;

const cluster = (name: string, backup: string, restoredAt?: string): EtcdCluster =>
  ({
    metadata: { name, namespace: "db" },
    spec: { bootstrap: { restore: { backup: { name: backup } } } },
    ...(restoredAt === undefined
      ? {}
      : { status: { restore: { source: `backup/${backup}`, completionTime: restoredAt } } }),
  }) as unknown as EtcdCluster;

describe("backupsInUse", () => {
  it("a restore not ended uses its backup; an ended one and a survivor recovery use none", () => {
    const used = backupsInUse(
      [
        restore("new", "b1"),
        restore("pending", "b2", "Pending"),
        restore("running", "b3", "Running"),
        restore("done", "b4", "Succeeded"),
        restore("failed", "b5", "Failed"),
        restore("survivor", undefined, "Running"),
      ],
      [],
    );
    expect([...used.keys()].sort()).toEqual(["b1", "b2", "b3"]);
    expect(used.get("b1")).toBe("EtcdRestore new (not started)");
    expect(used.get("b3")).toBe("EtcdRestore running (Running)");
  });

  it("a cluster that has not restored its bootstrap backup yet uses it; one that has, does not", () => {
    const used = backupsInUse(
      [],
      [cluster("fresh", "b1"), cluster("restored", "b2", "2026-12-01T00:00:00Z")],
    );
    expect([...used]).toEqual([["b1", "EtcdCluster fresh's spec.bootstrap.restore (not restored yet)"]]);
  });
});
