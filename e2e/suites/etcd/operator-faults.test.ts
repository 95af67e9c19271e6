// The operator's own failures, with the chart in namespace-scoped mode: killed in the middle of a scale-out it
// resumes and converges with no extra member; with two replicas one holds the Lease and deleting it hands over.
// One cluster, steps in order.
import { type Client, Lease, Pod } from "@capstan/core";
import { connect, createNamespace, eventually, type TestNamespace } from "@capstan/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { scrape } from "../core/fixtures/metrics-scraper.ts";
import {
  checkEtcd,
  clusterEvents,
  etcdCluster,
  ownedObjects,
  podReady,
  printFailureReport,
  tearDownSuite,
  waitAvailable,
  waitEtcdHealthy,
} from "./fixtures/etcd-cluster.ts";
import { dataClaimName, EtcdClusterKind } from "./fixtures/operator-api.ts";
import {
  etcdSuitesEnabled,
  installOperator,
  LEADER_LEASE,
  metricsReaderToken,
  type OperatorRelease,
  operatorPods,
} from "./fixtures/operator-release.ts";

const name = "faults";
const minutes = (n: number) => n * 60_000;

let client: Client;
let nsObj: TestNamespace;
let op: OperatorRelease | undefined;
let ns = "";
let metricsToken: string | undefined;

/** Waits until exactly `want` operator pods are ready; returns their names. */
function readyOperatorPods(want: number): Promise<string[]> {
  return eventually(
    async () => {
      if (op === undefined) throw new Error("no operator release");
      const pods = await operatorPods(client, op);
      const ready = pods.filter(podReady).map((p) => p.metadata.name ?? "");
      if (pods.length !== want || ready.length !== want) {
        throw new Error(`${ready.length} of ${pods.length} operator pods ready, want ${want}`);
      }
      return ready;
    },
    { timeoutMs: minutes(3), intervalMs: 1_000, message: `${want} operator pods are ready` },
  );
}

/**
 * Operator pods whose /metrics say they lead (leader_election_master_status 1), by name. The chart serves
 * metrics over HTTPS to authorized callers only: scrape with a metrics-reader ServiceAccount's token.
 */
async function podsLeading(): Promise<string[]> {
  metricsToken ??= await metricsReaderToken(client, op!);
  const leading: string[] = [];
  for (const pod of await operatorPods(client, op!)) {
    const res = await scrape(`https://${pod.status?.podIP}:8080/metrics`, metricsToken);
    if (res.status !== 200) throw new Error(`${pod.metadata.name} /metrics: HTTP ${res.status}: ${res.body}`);
    if (/^leader_election_master_status\{[^}]*\} 1$/m.test(res.body)) leading.push(pod.metadata.name ?? "");
  }
  return leading;
}

async function leaseHolder(): Promise<string | undefined> {
  return (await client.get(Lease, LEADER_LEASE, ns)).spec?.holderIdentity ?? undefined;
}

/** Waits until the 5 -> `replicas` convergence left exactly one pod and one volume per etcd member. */
async function expectNoLeftovers(members: string[]) {
  await eventually(
    async () => {
      const owned = await ownedObjects(client, ns, name);
      expect(owned.pods).toEqual(members);
      expect(owned.pvcs).toEqual(members.map(dataClaimName).sort());
    },
    { timeoutMs: 120_000, intervalMs: 1_000, message: "one pod and one volume per member, nothing else" },
  );
}

describe.skipIf(!etcdSuitesEnabled)("etcd operator faults (namespace-scoped install)", () => {
  beforeAll(async () => {
    ({ client } = connect());
    nsObj = await createNamespace(client, "etcd-faults");
    ns = nsObj.name;
    op = await installOperator(client, ns, { replicas: 1, watchNamespace: ns });
    await client.create(EtcdClusterKind, etcdCluster(ns, name));
  }, minutes(5));

  afterAll(() => tearDownSuite(client, { namespace: ns, name }, op, [nsObj]), minutes(5));

  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => printFailureReport(client, ns, name, op));
  });

  it(
    "an operator killed in the middle of a scale-out resumes and converges on 5 members, with no extra member",
    async () => {
      await waitAvailable(client, ns, name, 3, minutes(5));
      const v3 = await waitEtcdHealthy(client, ns, name, 3);
      const addsBefore = (await clusterEvents(client, ns, name)).filter(
        (e) => e.reason === "AddLearner",
      ).length;
      const [victim] = await readyOperatorPods(1);

      await client.patch(EtcdClusterKind, name, ns, { spec: { replicas: 5 } }, "merge", {
        subresource: "scale",
      });
      // Kill at the first sign of the scale-out: a 4th member in etcd, or the AddLearner event.
      const seen = await eventually(
        async () => {
          const { members } = await v3.etcd.memberList();
          if (members.length > 3) {
            return `${members.length} members in etcd (${members.map((m) => `${m.name || "(not started)"}${m.isLearner ? " learner" : ""}`).join(", ")})`;
          }
          const adds = (await clusterEvents(client, ns, name)).filter((e) => e.reason === "AddLearner");
          return adds.length > addsBefore ? `AddLearner event: ${adds.at(-1)?.note}` : false;
        },
        { timeoutMs: minutes(3), intervalMs: 100, message: "the scale-out starts" },
      );
      await client.delete(Pod, victim ?? "", ns, { gracePeriodSeconds: 0 });
      console.log(`operator pod ${victim} killed when: ${seen}`);

      const [restarted] = await readyOperatorPods(1);
      expect(restarted).not.toBe(victim);
      await waitAvailable(client, ns, name, 5, minutes(8));
      // Exactly 5 members in etcd's own list, all voters (checkEtcd fails on a learner or an extra member).
      const v5 = await waitEtcdHealthy(client, ns, name, 5);
      for (const m of v3.endpoints.keys())
        expect(v5.ids.get(m), `${m} is still a member`).toBe(v3.ids.get(m));
      await expectNoLeftovers([...v5.endpoints.keys()]);
    },
    minutes(12),
  );

  it(
    "with two replicas one holds the Lease; deleting the holder hands over, and a scale is still reconciled",
    async () => {
      await op?.upgrade({ replicas: 2, leaderElection: true });
      const pods = await readyOperatorPods(2);
      const holder = await eventually(
        async () => {
          const h = await leaseHolder();
          if (h === undefined || !pods.includes(h))
            throw new Error(`Lease holder ${h}, pods ${pods.join(", ")}`);
          return h;
        },
        { timeoutMs: minutes(2), intervalMs: 1_000, message: `one operator pod holds Lease ${LEADER_LEASE}` },
      );
      // Exactly one replica acts as the leader, and it is the holder.
      await eventually(async () => expect(await podsLeading()).toEqual([holder]), {
        timeoutMs: 60_000,
        intervalMs: 1_000,
        message: "only the Lease holder reports leader_election_master_status 1",
      });

      await client.delete(Pod, holder, ns, { gracePeriodSeconds: 0 });
      const next = await eventually(
        async () => {
          const h = await leaseHolder();
          const current = (await operatorPods(client, op!)).map((p) => p.metadata.name);
          if (h === undefined || h === holder || !current.includes(h)) {
            throw new Error(`Lease holder ${h}, operator pods ${current.join(", ")}`);
          }
          return h;
        },
        { timeoutMs: minutes(2), intervalMs: 1_000, message: "another operator pod takes the Lease" },
      );
      console.log(`lease handed over from ${holder} to ${next}`);
      await eventually(async () => expect(await podsLeading()).toEqual([next]), {
        timeoutMs: 60_000,
        intervalMs: 1_000,
        message: "only the new holder reports leader_election_master_status 1",
      });

      await client.patch(EtcdClusterKind, name, ns, { spec: { replicas: 3 } });
      await waitAvailable(client, ns, name, 3, minutes(6));
      const v3 = await waitEtcdHealthy(client, ns, name, 3);
      await expectNoLeftovers([...v3.endpoints.keys()]);
      expect((await checkEtcd(client, ns, name, 3)).ids).toEqual(v3.ids);
    },
    minutes(12),
  );
});
