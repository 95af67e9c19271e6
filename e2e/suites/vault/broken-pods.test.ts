// Issue 28's "a broken pod never blocks its fix", end to end on one 3-server cluster:
// - a standby's pod and claim deleted at rest: the operator removes its raft peer, gives it a new claim, and it
//   joins fresh, so raft voters equal the pods again (seen before the fix: the pod re-made on the missing claim
//   stayed Pending, the dead server stayed a voter, and status blamed the pod's placement);
// - a spec.config Vault refuses at start: the first rolled pod crash-loops, the VaultCluster is Degraded naming
//   that pod and the kubelet's reason; reverting the config heals it with no manual step (the crash-looping pod is
//   outdated and not serving, so it is replaced out of the rollout's order).
import { type Client, PersistentVolumeClaim, Pod } from "@capstan/core";
import { connect, createNamespace, eventually, type TestNamespace } from "@capstan/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { installOperator, type OperatorRelease, vaultSuitesEnabled } from "./fixtures/operator-release.ts";
import { names, VaultClusterKind } from "./fixtures/vault-api.ts";
import {
  condition,
  printFailureReport,
  serviceTarget,
  tearDownSuite,
  vaultCluster,
  vaultPods,
  waitAvailable,
  waitVault,
} from "./fixtures/vault-cluster.ts";
import { enableKv, kvGet, kvPut } from "./fixtures/vault-http.ts";

const name = "broken";
const minutes = (n: number) => n * 60_000;

let client: Client;
let nsObj: TestNamespace;
let op: OperatorRelease | undefined;
let ns = "";

describe.skipIf(!vaultSuitesEnabled)("VaultCluster: broken pods and their fixes", () => {
  beforeAll(async () => {
    ({ client } = connect());
    nsObj = await createNamespace(client, "vault-broken");
    ns = nsObj.name;
    op = await installOperator(client, ns, ns);
    await client.create(VaultClusterKind, vaultCluster(ns, name));
  }, minutes(5));

  afterAll(() => tearDownSuite(client, [{ namespace: ns, name }], op, [nsObj]), minutes(5));

  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => printFailureReport(client, ns, name, op));
  });

  it(
    "a standby's pod and claim deleted: it rejoins fresh on a new claim, raft voters == pods, the data kept",
    async () => {
      await waitAvailable(client, ns, name, 3, minutes(6));
      const before = await waitVault(client, ns, name, 3);
      const active = await serviceTarget(client, ns, names(name).activeService, before.ca, name);
      await enableKv(active, before.token);
      await kvPut(active, before.token, "broken/claim", { v: "kept" });

      const victim = before.standbys[0]!;
      const claimName = names(name).claim(victim);
      const oldClaim = (await client.get(PersistentVolumeClaim, claimName, ns)).metadata.uid;
      // The claim first (it stays, being deleted, while its pod runs: pvc-protection), then the pod.
      await client.delete(PersistentVolumeClaim, claimName, ns);
      await client.delete(Pod, victim, ns);

      // A new claim of that name (not the old one), and Vault's own view: 3 unsealed servers, raft peers = pods,
      // all voters (checkVault refuses a non-voter), one leader.
      await eventually(
        async () => {
          const claim = await client.get(PersistentVolumeClaim, claimName, ns);
          if (claim.metadata.uid === oldClaim) throw new Error(`${claimName} is still the old claim`);
          if (claim.metadata.deletionTimestamp !== undefined)
            throw new Error(`${claimName} is being deleted`);
          return claim;
        },
        { timeoutMs: minutes(4), intervalMs: 1_000, message: `a new ${claimName}` },
      );
      const after = await waitVault(client, ns, name, 3, minutes(6));
      expect(after.clusterId).toBe(before.clusterId);
      expect([...after.targets.keys()]).toContain(victim);
      const status = await waitAvailable(client, ns, name, 3, minutes(4));
      expect(status.status?.raftPeers?.map((p) => p.nodeID).sort()).toEqual([...after.targets.keys()].sort());
      expect(condition(status, "Degraded")?.status).not.toBe("True");
      // The cluster's data lives in the quorum: the secret written before is still there.
      const activeNow = await serviceTarget(client, ns, names(name).activeService, after.ca, name);
      expect(await kvGet(activeNow, after.token, "broken/claim")).toEqual({ v: "kept" });
    },
    minutes(16),
  );

  it(
    "a spec.config Vault refuses at start: Degraded naming the crash-looping pod; reverting the config recovers with no manual step",
    async () => {
      await waitAvailable(client, ns, name, 3, minutes(4));
      const before = await waitVault(client, ns, name, 3);
      // Valid JSON the schema accepts (a user key), refused by Vault when it loads its configuration.
      await client.patch(VaultClusterKind, name, ns, { spec: { config: { default_lease_ttl: "forever" } } });

      const degraded = await eventually(
        async () => {
          const c = await client.get(VaultClusterKind, name, ns);
          const d = condition(c, "Degraded");
          if (d?.status !== "True" || !/CrashLoop|ContainerFailed/.test(d.reason ?? ""))
            throw new Error(`Degraded=${d?.status} ${d?.reason}: ${d?.message}`);
          return d;
        },
        { timeoutMs: minutes(6), intervalMs: 2_000, message: "Degraded names the crash-looping pod" },
      );
      const pods = (await vaultPods(client, ns, name)).map((p) => p.metadata.name ?? "");
      const named = pods.filter((p) => new RegExp(`\\b${p}\\b`).test(degraded.message ?? ""));
      expect(named.length, degraded.message).toBe(1);
      // Only a standby was rolled onto the bad config: the active node and the quorum are untouched.
      expect(before.standbys).toContain(named[0]);
      console.log(`bad config: ${degraded.reason}: ${degraded.message}`);

      // The fix: the config reverted. Nothing else is done by hand.
      await client.patch(VaultClusterKind, name, ns, { spec: { config: null } });
      const healed = await waitAvailable(client, ns, name, 3, minutes(8));
      expect(condition(healed, "Degraded")?.status).not.toBe("True");
      const after = await waitVault(client, ns, name, 3);
      expect(after.clusterId).toBe(before.clusterId);
      const activeNow = await serviceTarget(client, ns, names(name).activeService, after.ca, name);
      expect(await kvGet(activeNow, after.token, "broken/claim")).toEqual({ v: "kept" });
    },
    minutes(16),
  );
});
