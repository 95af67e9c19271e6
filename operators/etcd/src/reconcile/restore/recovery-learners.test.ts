// What the recovery observes of learners (issue 27 item 4): a member answering as one is marked (never a survivor),
// the learners a survivor lists are counted apart; and the removal of a learner --force-new-cluster left behind
// (etcd-io/etcd#20893), through the survivor alone.
import type { Client } from "@capstan/core";
import { describe, expect, it } from "vitest";
import type { EtcdCluster } from "../../api/etcd-cluster.ts";
import type { EtcdRestore } from "../../api/etcd-restore.ts";
import type { Observation } from "../cluster/observe.ts";
import { actRecovery, observeRecoveryMembers } from "./recovery.ts";
import { learnerAwareEtcd, noCache, recoveryClaim, recoveryPod } from "./recovery-fixture.ts";

const cluster: EtcdCluster = {
  apiVersion: "etcd.capstan.dev/v1alpha1",
  kind: "EtcdCluster",
  metadata: { name: "demo", namespace: "ns", uid: "u1" },
  spec: { replicas: 3, version: "3.6.15", repository: "repo/etcd", storage: { size: "1Gi" } },
};
const restore: EtcdRestore = {
  apiVersion: "etcd.capstan.dev/v1alpha1",
  kind: "EtcdRestore",
  metadata: { name: "dr", namespace: "ns" },
  spec: { clusterName: "demo", from: "Survivor" },
  status: { phase: "Running", startTime: "T0" },
};

describe("observeRecoveryMembers: learners", () => {
  it("a member answering as a learner is marked; the other learners it lists are counted apart", async () => {
    const obs = {
      claims: new Map([["demo-b", recoveryClaim("demo-b")]]),
      pods: new Map([["demo-b", recoveryPod("demo-b", { ip: "10.0.0.2" })]]),
    } as unknown as Observation;
    const list = [
      { id: "2", name: "demo-b", isLearner: false },
      { id: "7", name: "demo-a", isLearner: true },
    ];
    const voter = await observeRecoveryMembers(
      cluster,
      "dr",
      noCache,
      obs,
      learnerAwareEtcd({ id: "2", learner: false }, list).factory,
    );
    expect(voter[0]).toMatchObject({ membersListed: 2, learnersListed: [{ id: "7", name: "demo-a" }] });
    expect(voter[0]?.learner).toBeUndefined();
    const learner = await observeRecoveryMembers(
      cluster,
      "dr",
      noCache,
      obs,
      learnerAwareEtcd({ id: "7", learner: true }, list).factory,
    );
    expect(learner[0]).toMatchObject({ learner: true, learnersListed: [] });
  });
});

describe("actRecovery RemoveLearner", () => {
  it("removes the learner's ID through the survivor's own endpoint", async () => {
    const etcd = learnerAwareEtcd({ id: "2", learner: false }, []);
    const obs = { claims: new Map(), pods: new Map([["demo-b", recoveryPod("demo-b", { ip: "10.0.0.2" })]]) };
    const status = await actRecovery(
      { type: "RemoveLearner", name: "demo-b", learner: "demo-a", memberId: "7", message: "m" },
      {
        client: {} as Client,
        cluster,
        obs: obs as unknown as Observation,
        etcdClient: etcd.factory,
      },
      restore,
      new Date(0),
    );
    expect(etcd.calls).toEqual(["remove 7 via http://10.0.0.2:2379"]);
    expect(status).toMatchObject({ phase: "Running", message: "m" });
  });
});
