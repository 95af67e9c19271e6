// The end of a recovery from a survivor against a REAL etcd (one voter listening on its "pod IP", a loopback
// address): a learner left in its member list, as --force-new-cluster leaves one on releases with
// etcd-io/etcd#20893, is observed apart from the voters, does not keep the survivor from counting as alone, and is
// removed through the survivor alone (the one voter commits it); the recovery then ends. The learner here is added
// and never started, which is what the survivor's list holds in that case: a learner whose process is gone.
// Skipped when the etcd binary is missing or the address cannot be bound.
import { createServer } from "node:net";
import type { Cache, Client, PodObject } from "@capstan/core";
import { waitFor } from "@capstan/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EtcdCluster } from "../../api/etcd-cluster.ts";
import type { EtcdRestore } from "../../api/etcd-restore.ts";
import { EtcdClient } from "../../etcd/etcd-client.ts";
import { haveLocalEtcd, LocalEtcd } from "../../etcd/local-etcd.ts";
import { planRecovery } from "../../plan/recovery.ts";
import type { EtcdClientFactory, Observation } from "../cluster/observe.ts";
import {
  actRecovery,
  observeRecoveryMembers,
  RECOVERY_PHASE_ANNOTATION,
  SURVIVOR_ANNOTATION,
} from "./recovery.ts";

const IP = "127.66.0.27";

async function bindable(ip: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, ip, () => server.close(() => resolve(true)));
  });
}

const usable = haveLocalEtcd() && (await bindable(IP, 2379)) && (await bindable(IP, 2380));

const cluster: EtcdCluster = {
  apiVersion: "etcd.capstan.dev/v1alpha1",
  kind: "EtcdCluster",
  metadata: { name: "demo", namespace: "ns", uid: "u1" },
  spec: { replicas: 3, version: "3.6.16", repository: "r", storage: { size: "1Gi" } },
};
const restore: EtcdRestore = {
  apiVersion: "etcd.capstan.dev/v1alpha1",
  kind: "EtcdRestore",
  metadata: { name: "dr", namespace: "ns" },
  spec: { clusterName: "demo", from: "Survivor" },
  status: { phase: "Running", startTime: "T0" },
};

describe.skipIf(!usable)("a learner left after --force-new-cluster, against a real etcd", () => {
  let etcd: LocalEtcd;
  const endpoint = `http://${IP}:2379`;
  const factory: EtcdClientFactory = (endpoints) => new EtcdClient({ endpoints, timeoutMs: 5_000 });

  beforeAll(async () => {
    etcd = await LocalEtcd.create();
    const spec = { name: "demo-b", clientURL: endpoint, peerURL: `http://${IP}:2380` };
    etcd.start(spec, [spec], "new");
    const probe = new EtcdClient({ endpoints: [endpoint] });
    await waitFor(
      "etcd ready",
      async () => ((await probe.health(endpoint)).healthy ? true : undefined),
      60_000,
    );
  }, 90_000);

  afterAll(async () => {
    await etcd?.stop();
  });

  it("observes the learner apart, removes it through the survivor, then recovers", async () => {
    const learner = await new EtcdClient({ endpoints: [endpoint] }).memberAddAsLearner([
      "http://127.66.0.28:2380",
    ]);
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "demo-b", namespace: "ns", annotations: {} },
      spec: { containers: [] },
      status: { phase: "Running", podIP: IP },
    } as unknown as PodObject;
    const claim = {
      metadata: {
        name: "demo-b-data",
        annotations: { [SURVIVOR_ANNOTATION]: "dr", [RECOVERY_PHASE_ANNOTATION]: "unforce" },
      },
    };
    const obs = {
      claims: new Map([["demo-b", claim]]),
      pods: new Map([["demo-b", pod]]),
    } as unknown as Observation;
    const cache = { list: async () => [] } as unknown as Cache;
    const observe = () => observeRecoveryMembers(cluster, "dr", cache, obs, factory);
    const plan = async () =>
      planRecovery({ request: "dr", from: "Survivor", quorum: true, members: await observe() });

    const before = await observe();
    expect(before[0]).toMatchObject({
      membersListed: 2,
      learnersListed: [{ id: learner.id }],
      healthy: true,
    });
    expect(before[0]?.learner).toBeUndefined();
    const step = await plan();
    expect(step).toMatchObject({ type: "RemoveLearner", name: "demo-b", memberId: learner.id });

    await actRecovery(step, { client: {} as Client, cluster, obs, etcdClient: factory }, restore, new Date());
    const after = await observe();
    expect(after[0]).toMatchObject({ membersListed: 1, learnersListed: [] });
    expect(await plan()).toMatchObject({ type: "Recovered", survivor: "demo-b" });
  });
});
