// The failures an SRE meets (issue 10), each on its own EtcdCluster under the chart-installed operator: a full
// database (NOSPACE) reported as Degraded with no member lost and recovered as the docs say; a member made
// unschedulable replaced while the others take writes; a version whose image does not exist stalls on one
// member, deletes no claim, and a revert converges; the status wiped and every pod deleted brings the same
// cluster back; scaling 5 -> 3 with an eviction of 3 members at once is refused by the PodDisruptionBudget.
// Each test logs how long the operator took, for the docs' table.
import { execFile } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { type Client, PersistentVolumeClaim, Pod, PodDisruptionBudget } from "@capstan/core";
import {
  connect,
  createNamespace,
  eventually,
  TEST_POD_RESOURCES,
  type TestNamespace,
} from "@capstan/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  checkEtcd,
  clusterEvents,
  condition,
  deleteCluster,
  differencesOnMembers,
  etcdCluster,
  keysUnder,
  memberPods,
  printFailureReport,
  putKeys,
  readyEndpoints,
  tearDownSuite,
  waitAvailable,
  waitEtcdHealthy,
} from "./fixtures/etcd-cluster.ts";
import { CLUSTER_LABEL, EtcdClient, EtcdClusterKind } from "./fixtures/operator-api.ts";
import { etcdSuitesEnabled, installOperator, type OperatorRelease } from "./fixtures/operator-release.ts";
import { compareWrites, startWriter } from "./fixtures/sequential-writer.ts";

const run = promisify(execFile);
const restricted = { "pod-security.kubernetes.io/enforce": "restricted" };
const minutes = (n: number) => n * 60_000;
const seconds = (since: number) => Math.round((Date.now() - since) / 1000);

let client: Client;
let opNs: TestNamespace;
let clusterNs: TestNamespace;
let op: OperatorRelease | undefined;
let ns = "";
let current = "";

/** Claims of a cluster (names). */
async function claimNames(name: string): Promise<string[]> {
  const list = await client.list(PersistentVolumeClaim, {
    namespace: ns,
    labelSelector: `${CLUSTER_LABEL}=${name}`,
  });
  return list.items.map((c) => c.metadata.name ?? "").sort();
}

/** The kubectl the local cluster's build put in the cache, if any. */
function localKubectl(): string | undefined {
  const cache = process.env.CAPSTAN_CACHE ?? join(homedir(), ".cache", "capstan");
  if (!existsSync(cache)) return undefined;
  const dir = readdirSync(cache).find((d) => d.startsWith("kubernetes-"));
  const bin = dir === undefined ? undefined : join(cache, dir, "bin", "kubectl");
  return bin !== undefined && existsSync(bin) ? bin : undefined;
}

/** POSTs an Eviction of `pod` through kubectl (the policy/v1 Eviction subresource); true when it was admitted. */
async function evict(pod: string): Promise<"evicted" | "refused" | "gone"> {
  const kubectl = process.env.CAPSTAN_KUBECTL ?? localKubectl() ?? "kubectl";
  const body = JSON.stringify({
    apiVersion: "policy/v1",
    kind: "Eviction",
    metadata: { name: pod, namespace: ns },
  });
  const kubeconfig = process.env.KUBECONFIG === undefined ? [] : ["--kubeconfig", process.env.KUBECONFIG];
  const child = run(kubectl, [
    ...kubeconfig,
    "create",
    "--raw",
    `/api/v1/namespaces/${ns}/pods/${pod}/eviction`,
    "-f",
    "-",
  ]);
  child.child.stdin?.end(body);
  return child.then(
    () => "evicted" as const,
    (err: { stderr?: string }) => {
      if (/disruption budget|429|TooManyRequests/i.test(err.stderr ?? "")) return "refused" as const;
      // Already deleted: the operator's scale-in removed this member first.
      if (/NotFound|not found/i.test(err.stderr ?? "")) return "gone" as const;
      throw err;
    },
  );
}

describe.skipIf(!etcdSuitesEnabled)("EtcdCluster under the failures an SRE meets", () => {
  beforeAll(async () => {
    ({ client } = connect());
    opNs = await createNamespace(client, "etcd-fail-op", restricted);
    clusterNs = await createNamespace(client, "etcd-fail", restricted);
    ns = clusterNs.name;
    op = await installOperator(client, opNs.name, { watchNamespace: ns });
  }, minutes(5));

  afterAll(() => tearDownSuite(client, { namespace: ns, name: current }, op, [clusterNs, opNs]), minutes(5));

  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => printFailureReport(client, ns, current, op));
  });

  it(
    "a full database: NOSPACE is Degraded (never Available), no member is lost, compact + defrag + disarm recover",
    async () => {
      current = "nospace";
      // 1Gi volumes: a quota of 256 MiB.
      await client.create(EtcdClusterKind, etcdCluster(ns, current, { storage: { size: "1Gi" } }));
      const before = await waitEtcdHealthy(client, ns, current, 3);
      const value = "x".repeat(1024 * 1024);
      const started = Date.now();
      let full: unknown;
      for (let i = 0; i < 400 && full === undefined; i++) {
        await before.etcd.put("/nospace/big", `${i}${value}`).catch((err: unknown) => {
          full = err;
        });
      }
      expect(String(full)).toContain("database space exceeded");
      const degraded = await eventually(
        async () => {
          const c = await client.get(EtcdClusterKind, current, ns);
          return condition(c, "Degraded")?.reason === "AlarmNospace" ? c : false;
        },
        { timeoutMs: minutes(2), message: "Degraded=True, reason AlarmNospace" },
      );
      console.log(`NOSPACE reported as Degraded ${seconds(started)}s after the writes began`);
      expect(condition(degraded, "Available")?.status).toBe("False");
      expect((await clusterEvents(client, ns, current)).some((e) => e.reason === "AlarmNospace")).toBe(true);
      // No member lost: the same three members and pods.
      expect((await before.etcd.memberList()).members.map((m) => m.id).sort()).toEqual(
        [...before.ids.values()].map((id) => BigInt(`0x${id}`).toString(10)).sort(),
      );
      expect((await memberPods(client, ns, current)).length).toBe(3);

      // The documented recovery.
      const recovering = Date.now();
      const status = await before.etcd.status([...before.endpoints.values()][0]!);
      await before.etcd.compact(status.header.revision);
      const leader = before.endpoints.get(before.leader)!;
      for (const endpoint of [...before.endpoints.values()].filter((e) => e !== leader)) {
        await before.etcd.defragment(endpoint, { timeoutMs: minutes(2) });
      }
      await before.etcd.defragment(leader, { timeoutMs: minutes(2) });
      for (const alarm of await before.etcd.alarmList())
        await before.etcd.alarmDisarm(alarm.memberId, alarm.alarm);
      await before.etcd.put("/nospace/after", "ok");
      await waitAvailable(client, ns, current, 3);
      const after = await client.get(EtcdClusterKind, current, ns);
      expect(condition(after, "Degraded")?.status).toBe("False");
      console.log(`NOSPACE: Available again ${seconds(recovering)}s after the recovery began`);
      await deleteCluster(client, ns, current);
    },
    minutes(15),
  );

  it(
    "a member made unschedulable is replaced while the others serve writes",
    async () => {
      current = "unsched";
      await client.create(
        EtcdClusterKind,
        etcdCluster(ns, current, { recovery: { unschedulableSeconds: 30 } }),
      );
      const before = await waitEtcdHealthy(client, ns, current, 3);
      const prefix = "/unsched/";
      const writer = startWriter({ prefix, endpoints: () => readyEndpoints(client, ns, current) });
      try {
        // A request no node can meet: the pod template rolls, the first restarted member cannot be scheduled.
        const started = Date.now();
        await client.patch(EtcdClusterKind, current, ns, {
          spec: { podTemplate: { resources: { requests: { cpu: "1000" } } } },
        });
        const replaced = await eventually(
          async () =>
            (await clusterEvents(client, ns, current)).find(
              (e) => e.reason === "ReplaceMember" && e.note.includes("found no node"),
            ) ?? false,
          { timeoutMs: minutes(5), message: "a ReplaceMember of the unschedulable member" },
        );
        console.log(
          `unschedulable member replaced ${seconds(started)}s after it became Pending: ${replaced.note}`,
        );
        const ackedAtReplace = writer.stats().acked;
        // Give the cluster a schedulable template back: it converges on fresh members.
        await client.patch(EtcdClusterKind, current, ns, {
          spec: { podTemplate: { resources: TEST_POD_RESOURCES } },
        });
        const after = await waitEtcdHealthy(client, ns, current, 3, minutes(8));
        const stats = await writer.stop();
        expect(stats.acked - ackedAtReplace).toBeGreaterThan(0);
        for (const endpoint of after.endpoints.values()) {
          expect(compareWrites(await keysUnder(endpoint, prefix), prefix, stats)).toEqual({
            missing: [],
            unexpected: [],
          });
        }
        expect([...after.ids.values()]).not.toEqual([...before.ids.values()]);
        console.log(`unschedulable: converged ${seconds(started)}s after the change`);
      } finally {
        await writer.stop();
      }
      await deleteCluster(client, ns, current);
    },
    minutes(15),
  );

  it(
    "a version whose image does not exist stalls on one member, stays Degraded ImagePullFailed (no flapping), deletes no claim, and reverting converges",
    async () => {
      current = "badimage";
      await client.create(EtcdClusterKind, etcdCluster(ns, current, { version: "3.6.15" }));
      const before = await waitEtcdHealthy(client, ns, current, 3);
      const claimsBefore = await claimNames(current);
      const started = Date.now();
      await client.patch(EtcdClusterKind, current, ns, { spec: { version: "3.6.99" } });
      const degraded = await eventually(
        async () => {
          const c = await client.get(EtcdClusterKind, current, ns);
          return condition(c, "Degraded")?.reason === "ImagePullFailed" ? c : false;
        },
        { timeoutMs: minutes(5), message: "Degraded=True, reason ImagePullFailed" },
      );
      console.log(`unpullable image reported ${seconds(started)}s after the change`);
      expect(condition(degraded, "Degraded")?.message).toContain(":v3.6.99");
      // The verdict holds while the kubelet alternates the pull errors with CrashLoopBackOff on the old image
      // (issue 27, item 13: it flipped back to AsExpected every other observation), and only one member was moved to
      // the new image; nothing was deleted (past the not-ready threshold too).
      const heldUntil = Date.now() + 90_000;
      while (Date.now() < heldUntil) {
        const c = condition(await client.get(EtcdClusterKind, current, ns), "Degraded");
        expect(`${c?.status} ${c?.reason}`, c?.message).toBe("True ImagePullFailed");
        await new Promise((r) => setTimeout(r, 5_000));
      }
      const pods = await memberPods(client, ns, current);
      const onBad = pods.filter((p) => p.spec?.containers[0]?.image?.endsWith(":v3.6.99"));
      expect(onBad.length).toBe(1);
      expect(await claimNames(current)).toEqual(claimsBefore);
      const reverting = Date.now();
      await client.patch(EtcdClusterKind, current, ns, { spec: { version: "3.6.15" } });
      const after = await waitEtcdHealthy(client, ns, current, 3, minutes(6));
      await waitAvailable(client, ns, current, 3);
      expect(after.ids).toEqual(before.ids);
      expect(await claimNames(current)).toEqual(claimsBefore);
      console.log(`unpullable image: converged ${seconds(reverting)}s after the revert`);
      await deleteCluster(client, ns, current);
    },
    minutes(15),
  );

  it(
    "the status wiped and every pod deleted: the same cluster comes back, same cluster ID, every key present",
    async () => {
      current = "wiped";
      await client.create(EtcdClusterKind, etcdCluster(ns, current));
      const before = await waitEtcdHealthy(client, ns, current, 3);
      const written = await putKeys(before.etcd, "/wiped/", 50);
      const clusterID = (await waitAvailable(client, ns, current, 3)).status?.clusterID;
      expect(clusterID).toBeDefined();
      const started = Date.now();
      const eventsBefore = (await clusterEvents(client, ns, current)).length;
      for (const pod of await memberPods(client, ns, current)) {
        await client.delete(Pod, pod.metadata.name ?? "", ns, { gracePeriodSeconds: 0 });
      }
      await client.patchStatus(EtcdClusterKind, current, ns, { status: null }, "merge");
      const after = await waitEtcdHealthy(client, ns, current, 3, minutes(8));
      const back = await waitAvailable(client, ns, current, 3);
      console.log(`status wiped + all pods deleted: Available again after ${seconds(started)}s`);
      expect(back.status?.clusterID).toBe(clusterID);
      expect(after.ids).toEqual(before.ids);
      expect(await differencesOnMembers(after, written)).toEqual([]);
      const since = (await clusterEvents(client, ns, current)).slice(eventsBefore);
      expect(
        since.filter((e) => ["CreateSeed", "ReplaceMember", "CleanupMember"].includes(e.reason)),
      ).toEqual([]);
      await deleteCluster(client, ns, current);
    },
    minutes(15),
  );

  it(
    "scale 5 -> 3 with an eviction of 3 members at once: the PodDisruptionBudget refuses what would break quorum",
    async () => {
      current = "evict";
      await client.create(EtcdClusterKind, etcdCluster(ns, current, { replicas: 5 }));
      const five = await waitEtcdHealthy(client, ns, current, 5, minutes(8));
      await client.patch(EtcdClusterKind, current, ns, { spec: { replicas: 3 } });
      // The budget counts the 5 voters that still exist, not the 3 asked for.
      await eventually(
        async () => (await client.get(PodDisruptionBudget, current, ns)).spec?.minAvailable === 3,
        { timeoutMs: 30_000, message: "PDB minAvailable 3" },
      );
      const victims = [...five.endpoints.keys()].filter((m) => m !== five.leader).slice(0, 3);
      const answers = await Promise.all(victims.map((p) => evict(p)));
      console.log(`evictions of ${victims.join(", ")}: ${answers.join(", ")}`);
      // The budget (minAvailable 3 of 5 voters) admits at most 2 of the 3. The scale-in may already have removed a
      // victim ("gone"): the budget then follows the voters left, and whether one is refused depends on how many
      // went; with none gone, the third must be refused. Either way quorum holds (checked below).
      expect(answers.filter((a) => a === "evicted").length).toBeLessThanOrEqual(2);
      if (!answers.includes("gone")) expect(answers).toContain("refused");
      // The cluster never lost its quorum and converges on 3 members.
      const three = await waitEtcdHealthy(client, ns, current, 3, minutes(8));
      expect(
        (await new EtcdClient({ endpoints: [...three.endpoints.values()] }).put("/evict/k", "v")).revision,
      ).toBeGreaterThan(0);
      await checkEtcd(client, ns, current, 3);
      await deleteCluster(client, ns, current);
    },
    minutes(15),
  );
});
