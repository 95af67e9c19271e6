// A rolling upgrade 3.6.15 -> 3.6.16 under continuous writes (none lost, the leader upgraded last), then a
// refused downgrade to 3.5 (Degraded naming spec.version, no member touched). One cluster, steps in order.
import type { Client } from "@capstan/core";
import { connect, createNamespace, eventually, type TestNamespace } from "@capstan/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  type ClusterEvent,
  checkEtcd,
  clusterEvents,
  condition,
  etcdCluster,
  keysUnder,
  memberPods,
  namesMember,
  podEndpoint,
  podReady,
  printFailureReport,
  readyEndpoints,
  tearDownSuite,
  waitAvailable,
  waitEtcdHealthy,
} from "./fixtures/etcd-cluster.ts";
import { EtcdClient, EtcdClusterKind } from "./fixtures/operator-api.ts";
import { etcdSuitesEnabled, installOperator, type OperatorRelease } from "./fixtures/operator-release.ts";
import { compareWrites, startWriter } from "./fixtures/sequential-writer.ts";

const name = "upg";
const from = "3.6.15";
const to = "3.6.16";
const minutes = (n: number) => n * 60_000;

let client: Client;
let nsObj: TestNamespace;
let op: OperatorRelease | undefined;
let ns = "";

/** Events that were not there before (by reason, note and first time). */
function newSince(before: ClusterEvent[], now: ClusterEvent[]): ClusterEvent[] {
  const seen = new Set(before.map((e) => `${e.reason}|${e.note}|${e.time}`));
  return now.filter((e) => !seen.has(`${e.reason}|${e.note}|${e.time}`));
}

describe.skipIf(!etcdSuitesEnabled)("EtcdCluster rolling upgrade", () => {
  beforeAll(async () => {
    ({ client } = connect());
    nsObj = await createNamespace(client, "etcd-upgrade");
    ns = nsObj.name;
    op = await installOperator(client, ns, { watchNamespace: ns });
    await client.create(EtcdClusterKind, etcdCluster(ns, name, { version: from }));
  }, minutes(5));

  afterAll(() => tearDownSuite(client, { namespace: ns, name }, op, [nsObj]), minutes(5));

  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => printFailureReport(client, ns, name, op));
  });

  it(
    `upgrades ${from} -> ${to} one member at a time under continuous writes: none lost, the leader last`,
    async () => {
      await waitAvailable(client, ns, name, 3, minutes(5));
      const start = await waitEtcdHealthy(client, ns, name, 3);
      for (const s of start.statuses.values()) expect(s.version).toBe(from);
      const eventsBefore = await clusterEvents(client, ns, name);

      const prefix = "/upgrade/writes/";
      const writer = startWriter({ prefix, endpoints: () => readyEndpoints(client, ns, name) });
      /** Members in the order they were first seen running `to`. */
      const order: string[] = [];
      /** For each member, the leader it reported the last time it was seen on the old version. */
      const leaderWhenLastOld = new Map<string, string>();
      const leaderAtStart = start.leader;
      try {
        await eventually(() => writer.stats().acked > 0, { timeoutMs: 30_000, message: "the writer writes" });
        await client.patch(EtcdClusterKind, name, ns, { spec: { version: to } });

        await eventually(
          async () => {
            // One sample: every member pod's version and the leader it knows, from its own endpoint.
            const pods = (await memberPods(client, ns, name)).filter((p) => p.status?.podIP);
            const etcd = new EtcdClient({ endpoints: pods.map(podEndpoint), timeoutMs: 2_000 });
            const idToName = new Map(
              (await etcd.memberList().catch(() => ({ members: [] }))).members.map((m) => [m.id, m.name]),
            );
            const versions = new Map<string, string>();
            for (const pod of pods) {
              const member = pod.metadata.name ?? "";
              const s = await etcd.status(podEndpoint(pod)).catch(() => undefined);
              if (s === undefined) continue;
              versions.set(member, s.version);
              if (s.version === to && !order.includes(member)) order.push(member);
              const leader = idToName.get(s.leader);
              if (s.version === from && leader !== undefined) leaderWhenLastOld.set(member, leader);
            }
            const c = await client.get(EtcdClusterKind, name, ns);
            const problems: string[] = [];
            if (c.status?.currentVersion !== to)
              problems.push(`status.currentVersion ${c.status?.currentVersion}`);
            if (pods.length !== 3 || !pods.every(podReady))
              problems.push(`${pods.length} pods, not all ready`);
            if ([...versions.values()].filter((v) => v === to).length !== 3) {
              problems.push(`versions ${JSON.stringify([...versions])}`);
            }
            if (problems.length > 0) throw new Error(problems.join("; "));
            return true;
          },
          { timeoutMs: minutes(10), intervalMs: 500, message: `every member runs ${to}` },
        );
        const stats = await writer.stop();
        const after = await waitEtcdHealthy(client, ns, name, 3);
        await waitAvailable(client, ns, name, 3);
        const events = newSince(eventsBefore, await clusterEvents(client, ns, name));
        console.log(
          `upgrade: writer ${JSON.stringify(stats)}; leader at start ${leaderAtStart}; upgrade order ${order.join(", ")}; ` +
            `leader last seen by each member before its upgrade ${JSON.stringify([...leaderWhenLastOld])}; ` +
            `events ${events.map((e) => `${e.reason}: ${e.note}`).join(" | ")}`,
        );

        // Same members, now all on the new version, and every acknowledged write on every member.
        expect(after.ids).toEqual(start.ids);
        for (const s of after.statuses.values()) expect(s.version).toBe(to);
        expect(stats.acked).toBeGreaterThan(0);
        for (const [member, endpoint] of after.endpoints) {
          const found = await keysUnder(endpoint, prefix);
          expect(compareWrites(found, prefix, stats), `writes on ${member}`).toEqual({
            missing: [],
            unexpected: [],
          });
        }
        for (const pod of await memberPods(client, ns, name)) {
          expect(pod.spec?.containers[0]?.image, pod.metadata.name).toMatch(new RegExp(`:v${to}$`));
        }

        // One UpgradeMember per member, in the order the members came back on the new version.
        const upgrades = events.filter((e) => e.reason === "UpgradeMember");
        const upgraded = upgrades.map((e) => [...start.endpoints.keys()].find((m) => namesMember(e.note, m)));
        expect(upgraded).toEqual(order);
        expect([...order].sort()).toEqual([...start.endpoints.keys()]);

        // The leader last: the member leading at the start is upgraded last, or leadership was moved away from
        // it before its upgrade. And no member was upgraded while it led without a MoveLeader first.
        const upgradeOf = (m: string) => upgrades.find((e) => namesMember(e.note, m));
        const movedAwayBefore = (m: string) => {
          const upgrade = upgradeOf(m);
          return events.some(
            (e) =>
              e.reason === "MoveLeader" &&
              namesMember(e.note, m) &&
              upgrade !== undefined &&
              e.time < upgrade.time,
          );
        };
        expect(
          order.at(-1) === leaderAtStart || movedAwayBefore(leaderAtStart),
          `leader at start ${leaderAtStart}, upgrade order ${order.join(", ")}`,
        ).toBe(true);
        for (const [member, leader] of leaderWhenLastOld) {
          if (leader === member) {
            expect(
              movedAwayBefore(member),
              `${member} led until its upgrade: a MoveLeader must precede it`,
            ).toBe(true);
          }
        }
      } finally {
        await writer.stop();
      }
    },
    minutes(16),
  );

  it(
    "refuses a downgrade to 3.5 with Degraded naming spec.version, and touches no member",
    async () => {
      const before = await waitEtcdHealthy(client, ns, name, 3);
      const podsBefore = (await memberPods(client, ns, name)).map((p) => [p.metadata.name, p.metadata.uid]);
      const upgradesBefore = (await clusterEvents(client, ns, name)).filter(
        (e) => e.reason === "UpgradeMember",
      );

      await client.patch(EtcdClusterKind, name, ns, { spec: { version: "3.5.21" } });
      const degraded = await eventually(
        async () => {
          const c = await client.get(EtcdClusterKind, name, ns);
          const d = condition(c, "Degraded");
          if (d?.status !== "True" || c.status?.observedGeneration !== c.metadata.generation) {
            throw new Error(
              `Degraded=${d?.status} (${d?.message}), observedGeneration ${c.status?.observedGeneration}`,
            );
          }
          return d;
        },
        { timeoutMs: 120_000, intervalMs: 1_000, message: "Degraded=True after the downgrade" },
      );
      expect(degraded.message).toContain("spec.version");
      expect(degraded.message).toContain("3.5.21");

      // Give the operator time to (wrongly) act, then check nothing moved.
      await new Promise((r) => setTimeout(r, 20_000));
      const still = await checkEtcd(client, ns, name, 3);
      expect(still.ids).toEqual(before.ids);
      for (const s of still.statuses.values()) expect(s.version).toBe(to);
      const pods = await memberPods(client, ns, name);
      expect(pods.map((p) => [p.metadata.name, p.metadata.uid])).toEqual(podsBefore);
      for (const pod of pods) expect(pod.spec?.containers[0]?.image).toMatch(new RegExp(`:v${to}$`));
      const upgradesAfter = (await clusterEvents(client, ns, name)).filter(
        (e) => e.reason === "UpgradeMember",
      );
      expect(upgradesAfter).toEqual(upgradesBefore);
      const c = await client.get(EtcdClusterKind, name, ns);
      expect(c.status?.currentVersion).toBe(to);

      // Setting the version back clears the condition.
      await client.patch(EtcdClusterKind, name, ns, { spec: { version: to } });
      await eventually(
        async () => {
          const live = await client.get(EtcdClusterKind, name, ns);
          const d = condition(live, "Degraded");
          if (d?.status === "True" || live.status?.observedGeneration !== live.metadata.generation) {
            throw new Error(`Degraded=${d?.status} (${d?.message})`);
          }
          return true;
        },
        { timeoutMs: 120_000, intervalMs: 1_000, message: "Degraded clears once the version is set back" },
      );
      await waitAvailable(client, ns, name, 3);
    },
    minutes(6),
  );
});
