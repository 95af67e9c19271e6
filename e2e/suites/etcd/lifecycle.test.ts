// The life of one EtcdCluster under the chart-installed operator, in namespaces that enforce Pod Security
// "restricted": 3 members become Available; scale 3 -> 5 -> 3 keeps the data; a lost pod is restarted and a
// lost pod and volume replaced while the cluster keeps taking writes; deleting the cluster removes what it owned.
// The steps share one cluster and run in order.
import { type Client, Namespace, PersistentVolumeClaim, Pod, PodDisruptionBudget } from "@capstan/core";
import { connect, createNamespace, eventually, type TestNamespace } from "@capstan/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  checkEtcd,
  clusterEvents,
  differencesOnMembers,
  etcdCluster,
  hashesAt,
  keysUnder,
  namesMember,
  ownedObjects,
  podReady,
  printFailureReport,
  putKeys,
  readyEndpoints,
  TEST_STORAGE_SIZE,
  tearDownSuite,
  waitAvailable,
  waitEtcdHealthy,
} from "./fixtures/etcd-cluster.ts";
import {
  clientServiceName,
  dataClaimName,
  EtcdClusterKind,
  peerServiceName,
} from "./fixtures/operator-api.ts";
import {
  etcdSuitesEnabled,
  installOperator,
  type OperatorRelease,
  operatorPods,
} from "./fixtures/operator-release.ts";
import { compareWrites, startWriter } from "./fixtures/sequential-writer.ts";

const name = "life";
const restricted = { "pod-security.kubernetes.io/enforce": "restricted" };
const minutes = (n: number) => n * 60_000;

let client: Client;
let opNs: TestNamespace;
let clusterNs: TestNamespace;
let op: OperatorRelease | undefined;
let ns = "";
/** Keys written at each step, read back at every later one. */
const written = new Map<string, string>();

describe.skipIf(!etcdSuitesEnabled)(
  "EtcdCluster lifecycle, in namespaces enforcing Pod Security restricted",
  () => {
    beforeAll(async () => {
      ({ client } = connect());
      opNs = await createNamespace(client, "etcd-life-op", restricted);
      clusterNs = await createNamespace(client, "etcd-life", restricted);
      ns = clusterNs.name;
      // Namespace-scoped (the operator in its own namespace, watching the cluster's): never touches other suites' clusters.
      op = await installOperator(client, opNs.name, { watchNamespace: ns });
    }, minutes(5));

    afterAll(() => tearDownSuite(client, { namespace: ns, name }, op, [clusterNs, opNs]), minutes(5));

    beforeEach(({ onTestFailed }) => {
      onTestFailed(() => printFailureReport(client, ns, name, op));
    });

    it(
      "3 members become Available, each healthy through the etcd API, and data written is read back",
      async () => {
        for (const n of [opNs.name, ns]) {
          const labels = (await client.get(Namespace, n)).metadata.labels ?? {};
          expect(labels["pod-security.kubernetes.io/enforce"], `namespace ${n}`).toBe("restricted");
        }
        // The operator's pods were admitted under "restricted" and are ready (helm install --wait).
        const operator = op ? await operatorPods(client, op) : [];
        expect(operator.length).toBeGreaterThan(0);
        expect(operator.every(podReady)).toBe(true);

        await client.create(EtcdClusterKind, etcdCluster(ns, name, { version: "3.6.15" }));
        const cluster = await waitAvailable(client, ns, name, 3, minutes(5));
        const view = await waitEtcdHealthy(client, ns, name, 3);

        const status = cluster.status ?? {};
        expect(status.phase).toBe("Running");
        expect(status.currentVersion).toBe("3.6.15");
        expect(status.replicas).toBe(3);
        expect(status.clusterID).toMatch(/^[0-9a-f]+$/);
        expect(status.selector).toContain(`etcd.capstan.dev/cluster=${name}`);
        expect((status.members ?? []).map((m) => [m.name, m.id]).sort()).toEqual(
          [...view.ids.entries()].sort(),
        );
        for (const s of view.statuses.values()) expect(s.version).toBe("3.6.15");
        // The status follows etcd's leader (it may lag a leader change by a reconcile).
        await eventually(
          async () => {
            const [c, v] = [
              await client.get(EtcdClusterKind, name, ns),
              await checkEtcd(client, ns, name, 3),
            ];
            expect(c.status?.leader).toBe(v.leader);
            expect(c.status?.members?.filter((m) => m.leader).map((m) => m.name)).toEqual([v.leader]);
          },
          { timeoutMs: 60_000, intervalMs: 1_000, message: "status.leader is etcd's leader" },
        );

        const owned = await ownedObjects(client, ns, name);
        expect(owned.services).toEqual([clientServiceName(cluster), peerServiceName(cluster)].sort());
        expect(owned.pdbs).toEqual([name]);
        expect((await client.get(PodDisruptionBudget, name, ns)).spec?.minAvailable).toBe(2);
        expect(owned.pvcs).toEqual([...view.endpoints.keys()].map(dataClaimName).sort());
        for (const pvc of owned.pvcs) {
          const claim = await client.get(PersistentVolumeClaim, pvc, ns);
          expect(claim.status?.phase, pvc).toBe("Bound");
          expect(claim.spec?.resources?.requests?.storage, pvc).toBe(TEST_STORAGE_SIZE);
        }

        for (const [k, v] of await putKeys(view.etcd, "/lifecycle/created/", 20)) written.set(k, v);
        expect(await differencesOnMembers(view, written)).toEqual([]);
      },
      minutes(8),
    );

    it(
      "scales 3 -> 5 -> 3: keys written before are read after, and hashKV agrees across members",
      async () => {
        const v3 = await checkEtcd(client, ns, name, 3);
        for (const [k, v] of await putKeys(v3.etcd, "/lifecycle/before-scale-out/", 50)) written.set(k, v);

        await client.patch(EtcdClusterKind, name, ns, { spec: { replicas: 5 } }, "merge", {
          subresource: "scale",
        });
        await waitAvailable(client, ns, name, 5, minutes(6));
        const v5 = await waitEtcdHealthy(client, ns, name, 5);
        for (const m of v3.endpoints.keys())
          expect(v5.ids.get(m), `${m} is still a member`).toBe(v3.ids.get(m));
        expect(await differencesOnMembers(v5, written)).toEqual([]);
        const mark5 = await v5.etcd.put("/lifecycle/hash-mark", "at-5");
        const hashes5 = await hashesAt(v5, mark5.revision);
        expect(new Set(hashes5.values()).size, JSON.stringify([...hashes5])).toBe(1);
        for (const [k, v] of await putKeys(v5.etcd, "/lifecycle/before-scale-in/", 50)) written.set(k, v);

        await client.patch(EtcdClusterKind, name, ns, { spec: { replicas: 3 } });
        await waitAvailable(client, ns, name, 3, minutes(5));
        const after = await waitEtcdHealthy(client, ns, name, 3);
        const members = [...after.endpoints.keys()];
        // The removed members' pods and volumes are deleted too.
        await eventually(
          async () => {
            const owned = await ownedObjects(client, ns, name);
            expect(owned.pods).toEqual(members);
            expect(owned.pvcs).toEqual(members.map(dataClaimName).sort());
          },
          { timeoutMs: 120_000, intervalMs: 1_000, message: "only the 3 members' pods and volumes are left" },
        );
        expect(await differencesOnMembers(after, written)).toEqual([]);
        const mark3 = await after.etcd.put("/lifecycle/hash-mark", "at-3");
        const hashes3 = await hashesAt(after, mark3.revision);
        expect(new Set(hashes3.values()).size, JSON.stringify([...hashes3])).toBe(1);

        const reasons = (await clusterEvents(client, ns, name)).map((e) => e.reason);
        for (const step of ["AddLearner", "PromoteLearner", "RemoveMember"]) {
          expect(reasons.filter((r) => r === step).length, `${step} events`).toBeGreaterThanOrEqual(2);
        }
        const status = (await client.get(EtcdClusterKind, name, ns)).status;
        expect(status?.replicas).toBe(3);
      },
      minutes(14),
    );

    it(
      "a podTemplate change rolls out: every member's pod is recreated on its data, one at a time",
      async () => {
        const before = await checkEtcd(client, ns, name, 3);
        const uids = new Map<string, string | undefined>();
        for (const m of before.endpoints.keys()) uids.set(m, (await client.get(Pod, m, ns)).metadata.uid);

        await client.patch(EtcdClusterKind, name, ns, {
          spec: { podTemplate: { annotations: { "example.com/rolled": "yes" } } },
        });
        await eventually(
          async () => {
            for (const m of before.endpoints.keys()) {
              const pod = await client.get(Pod, m, ns);
              expect(pod.metadata.annotations?.["example.com/rolled"], m).toBe("yes");
              expect(pod.metadata.uid, `${m} is a new pod`).not.toBe(uids.get(m));
              expect(podReady(pod), `${m} is ready`).toBe(true);
            }
          },
          {
            timeoutMs: minutes(6),
            intervalMs: 1_000,
            message: "every member pod carries the new annotation",
          },
        );
        await waitAvailable(client, ns, name, 3);
        const after = await waitEtcdHealthy(client, ns, name, 3);
        // Restarted in place: the same members (IDs) on their kept volumes, and the data is all there.
        expect(after.ids).toEqual(before.ids);
        expect(await differencesOnMembers(after, written)).toEqual([]);
        const restarts = (await clusterEvents(client, ns, name)).filter((e) => e.reason === "RestartMember");
        expect(
          restarts.map((e) => [...before.endpoints.keys()].find((m) => namesMember(e.note, m))).sort(),
        ).toEqual([...before.endpoints.keys()].sort());
      },
      minutes(8),
    );

    it(
      "a member's pod deleted is restarted on its data, and the cluster takes writes meanwhile",
      async () => {
        const before = await checkEtcd(client, ns, name, 3);
        const victim = [...before.endpoints.keys()].find((m) => m !== before.leader) ?? "";
        const oldUid = (await client.get(Pod, victim, ns)).metadata.uid;
        const prefix = "/lifecycle/pod-deleted/";
        const writer = startWriter({ prefix, endpoints: () => readyEndpoints(client, ns, name) });
        try {
          await eventually(() => writer.stats().acked > 0, {
            timeoutMs: 30_000,
            message: "the writer writes",
          });
          const ackedAtDelete = writer.stats().acked;
          await client.delete(Pod, victim, ns);

          await eventually(
            async () => {
              const pod = await client.get(Pod, victim, ns);
              return pod.metadata.uid !== oldUid && podReady(pod);
            },
            { timeoutMs: minutes(5), intervalMs: 500, message: `a new pod ${victim} is ready` },
          );
          const ackedWhileDown = writer.stats().acked - ackedAtDelete;
          const after = await waitEtcdHealthy(client, ns, name, 3);
          const stats = await writer.stop();
          console.log(
            `pod deleted: ${ackedWhileDown} writes acknowledged while ${victim} was away; ${JSON.stringify(stats)}`,
          );

          expect(ackedWhileDown, "writes acknowledged while the member was away").toBeGreaterThan(0);
          // Restarted in place: same member (ID) on its kept volume, not a new one.
          expect(after.ids).toEqual(before.ids);
          for (const endpoint of after.endpoints.values()) {
            expect(compareWrites(await keysUnder(endpoint, prefix), prefix, stats)).toEqual({
              missing: [],
              unexpected: [],
            });
          }
          expect(await differencesOnMembers(after, written)).toEqual([]);
          await waitAvailable(client, ns, name, 3);
          const events = await clusterEvents(client, ns, name);
          expect(events.some((e) => e.reason === "StartMemberPod" && namesMember(e.note, victim))).toBe(true);
        } finally {
          await writer.stop();
        }
      },
      minutes(8),
    );

    it(
      "a member whose pod and volume are deleted is replaced by a new member, and the cluster takes writes meanwhile",
      async () => {
        const before = await checkEtcd(client, ns, name, 3);
        // The leader: its loss also forces an election while the writer runs.
        const victim = before.leader;
        const prefix = "/lifecycle/member-lost/";
        const writer = startWriter({ prefix, endpoints: () => readyEndpoints(client, ns, name) });
        try {
          await eventually(() => writer.stats().acked > 0, {
            timeoutMs: 30_000,
            message: "the writer writes",
          });
          const ackedAtDelete = writer.stats().acked;
          // As a user would: the claim first (it stays until its pod is gone), then the pod.
          await client.delete(PersistentVolumeClaim, dataClaimName(victim), ns);
          await client.delete(Pod, victim, ns);

          await eventually(
            async () => {
              const c = await client.get(EtcdClusterKind, name, ns);
              const names = (c.status?.members ?? []).map((m) => m.name);
              if (names.includes(victim))
                throw new Error(`${victim} still in status.members (${names.join(", ")})`);
              return true;
            },
            { timeoutMs: minutes(5), intervalMs: 1_000, message: `${victim} leaves status.members` },
          );
          await waitAvailable(client, ns, name, 3, minutes(6));
          const after = await waitEtcdHealthy(client, ns, name, 3);
          const ackedWhileReplacing = writer.stats().acked - ackedAtDelete;
          const stats = await writer.stop();
          console.log(
            `member lost: ${ackedWhileReplacing} writes acknowledged while ${victim} was replaced; ${JSON.stringify(stats)}`,
          );

          const names = [...after.endpoints.keys()];
          expect(names).not.toContain(victim);
          const fresh = names.filter((n) => !before.endpoints.has(n));
          expect(fresh, "exactly one new member").toHaveLength(1);
          expect([...after.ids.values()]).not.toContain(before.ids.get(victim));
          expect(ackedWhileReplacing, "writes acknowledged while the member was replaced").toBeGreaterThan(0);
          for (const endpoint of after.endpoints.values()) {
            expect(compareWrites(await keysUnder(endpoint, prefix), prefix, stats)).toEqual({
              missing: [],
              unexpected: [],
            });
          }
          expect(await differencesOnMembers(after, written)).toEqual([]);
          await eventually(
            async () => {
              const owned = await ownedObjects(client, ns, name);
              expect(owned.pods).toEqual(names);
              expect(owned.pvcs).toEqual(names.map(dataClaimName).sort());
            },
            { timeoutMs: 120_000, intervalMs: 1_000, message: "the lost member's pod and volume are gone" },
          );
          const events = await clusterEvents(client, ns, name);
          expect(events.some((e) => e.reason === "ReplaceMember" && namesMember(e.note, victim))).toBe(true);
        } finally {
          await writer.stop();
        }
      },
      minutes(10),
    );

    it(
      "deleting the EtcdCluster removes its pods, services and disruption budget, and keeps the members' volumes",
      async () => {
        const before = await ownedObjects(client, ns, name);
        expect(before.pods).toHaveLength(3);
        expect(before.pvcs).toHaveLength(3);
        await client.delete(EtcdClusterKind, name, ns);
        await eventually(
          async () => {
            expect(await ownedObjects(client, ns, name)).toEqual({
              pods: [],
              pvcs: before.pvcs,
              services: [],
              pdbs: [],
            });
            const left = await client.list(EtcdClusterKind, { namespace: ns });
            expect(left.items.map((c) => c.metadata.name)).toEqual([]);
          },
          {
            timeoutMs: minutes(3),
            intervalMs: 1_000,
            message: "what the cluster owned is deleted, its claims kept",
          },
        );
        // Kept by spec.storage.whenDeleted: Retain (the default): owned by nothing, so nothing garbage-collects them.
        for (const pvc of before.pvcs) {
          const claim = await client.get(PersistentVolumeClaim, pvc, ns);
          expect(claim.metadata.ownerReferences ?? [], pvc).toEqual([]);
          expect(claim.metadata.deletionTimestamp, pvc).toBeUndefined();
        }
      },
      minutes(4),
    );
  },
);
