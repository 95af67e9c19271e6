// One reconcile of the EtcdCluster controller against the in-memory API server (core's test kit) and a scripted
// etcd: the wiring around the planner (PodDisruptionBudget from the voters that exist, before any removal).
import { PodDisruptionBudget } from "@capstan/core";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { EtcdOperatorMetrics } from "../metrics.ts";
import { etcdRecord, healthyEtcd, reconcileCluster, runningMembers, testCluster } from "../test-fixture.ts";
import { etcdClusterController } from "./controller.ts";

const names = ["demo-a", "demo-b", "demo-c", "demo-d", "demo-e"];
const cluster = testCluster({}, { generation: 2 });

describe("etcdClusterController", () => {
  it("applies as capstan-etcd-operator, the name in users' managedFields since the first release", () => {
    const c = etcdClusterController({ metrics: new EtcdOperatorMetrics(new Registry()) });
    expect(c.fieldManager).toBe("capstan-etcd-operator");
  });
});

describe("reconcileEtcdCluster", () => {
  it("scaling 5 -> 3: the PodDisruptionBudget keeps a quorum of the 5 voters, applied before the first removal", async () => {
    const etcd = etcdRecord();
    const run = await reconcileCluster(cluster, runningMembers(cluster, names), {
      etcdClient: healthyEtcd(cluster, etcd, names),
    });
    run.expectNoError();
    const pdb = run.get(PodDisruptionBudget, "demo", "ns");
    expect(pdb?.spec?.minAvailable).toBe(3);
    const order = run.writes.map((w) => `${w.verb} ${w.kind}`);
    const pdbAt = order.findIndex((w) => w.endsWith("PodDisruptionBudget"));
    const removalAt = order.indexOf("delete Pod");
    expect(pdbAt).toBeGreaterThanOrEqual(0);
    expect(removalAt).toBeGreaterThan(pdbAt);
    expect(etcd.calls).toContain("list linearizable");
    expect(etcd.calls.filter((c) => c.startsWith("remove"))).toHaveLength(1);
  });
});
