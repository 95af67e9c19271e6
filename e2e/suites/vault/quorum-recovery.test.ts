// A lost raft quorum recovered on request (VaultRecovery): a 3-server cluster with a secret written loses two
// servers with their data (pods AND claims deleted at once, while the operator is away): the cluster is QuorumLost and
// the operator changes no membership. A VaultRecovery then fences (no other server's pod), restarts the survivor on a peers.json that names
// only itself (Vault's outage recovery), unseals it, checks it leads alone, and hands the cluster back: the other two
// are made again on new claims and join. The secret written before the loss is read from every server, three raft
// voters, the same cluster ID, and the request Succeeded naming its survivor.
import { type Client, PersistentVolumeClaim, Pod } from "@capstan/core";
import { connect, createNamespace, eventually, type TestNamespace } from "@capstan/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  installOperator,
  type OperatorRelease,
  scaleOperator,
  vaultSuitesEnabled,
} from "./fixtures/operator-release.ts";
import { names, VaultClusterKind, type VaultRecovery, VaultRecoveryKind } from "./fixtures/vault-api.ts";
import {
  condition,
  printFailureReport,
  serviceTarget,
  tearDownSuite,
  vaultCluster,
  waitAvailable,
  waitVault,
} from "./fixtures/vault-cluster.ts";
import { enableKv, kvGet, kvPut } from "./fixtures/vault-http.ts";

const name = "qr";
const minutes = (n: number) => n * 60_000;

let client: Client;
let nsObj: TestNamespace;
let op: OperatorRelease | undefined;
let ns = "";

async function printRecovery(): Promise<void> {
  const r = await client.get(VaultRecoveryKind, "qr-dr", ns).catch(() => undefined);
  console.error(`VaultRecovery qr-dr: ${JSON.stringify(r?.status ?? null, null, 2)}`);
}

describe.skipIf(!vaultSuitesEnabled)("VaultRecovery: a lost raft quorum recovered from the survivor", () => {
  beforeAll(async () => {
    ({ client } = connect());
    nsObj = await createNamespace(client, "vault-quorum-recovery");
    ns = nsObj.name;
    op = await installOperator(client, ns, ns);
    await client.create(VaultClusterKind, vaultCluster(ns, name));
  }, minutes(5));

  afterAll(async () => {
    await client.delete(VaultRecoveryKind, "qr-dr", ns).catch(() => undefined);
    await tearDownSuite(client, [{ namespace: ns, name }], op, [nsObj]);
  }, minutes(5));

  beforeEach(({ onTestFailed }) => {
    onTestFailed(async () => {
      await printRecovery();
      await printFailureReport(client, ns, name, op);
    });
  });

  it(
    "two servers lost with their data: a VaultRecovery brings the cluster back with its data and 3 voters",
    async () => {
      const n = names(name);
      await waitAvailable(client, ns, name, 3, minutes(6));
      const before = await waitVault(client, ns, name, 3);
      const active = await serviceTarget(client, ns, n.activeService, before.ca, name);
      await enableKv(active, before.token);
      await kvPut(active, before.token, "dr/before", { written: "before the loss" });

      // Two servers and their data gone at once (a zone with local volumes lost): the claims first (held by
      // pvc-protection until their pods go), then the pods, without a grace period. The operator is away meanwhile:
      // with it running, a claim seen terminating while its pod still serves makes it remove that raft peer first
      // (quorum holding), so the cluster shrinks to its survivor and never loses quorum (a rehearsal of CI saw it do
      // exactly that; broken-pods.test.ts covers that path). Here the loss must be one it could not see coming.
      if (op === undefined) throw new Error("no operator release");
      await scaleOperator(client, op, 0);
      const lost = [1, 2].map(n.pod);
      for (const pod of lost) await client.delete(PersistentVolumeClaim, n.claim(pod), ns);
      for (const pod of lost) await client.delete(Pod, pod, ns, { gracePeriodSeconds: 0 });
      await eventually(
        async () => {
          for (const pod of lost) {
            await expect(client.get(PersistentVolumeClaim, n.claim(pod), ns), n.claim(pod)).rejects.toThrow();
          }
        },
        { timeoutMs: minutes(2), intervalMs: 1_000, message: "the lost servers' claims are gone" },
      );
      await scaleOperator(client, op, 1);
      await eventually(
        async () => {
          const c = await client.get(VaultClusterKind, name, ns);
          expect(condition(c, "Degraded")).toMatchObject({ status: "True", reason: "QuorumLost" });
          for (const pod of lost) {
            await expect(client.get(PersistentVolumeClaim, n.claim(pod), ns), n.claim(pod)).rejects.toThrow();
          }
        },
        {
          timeoutMs: minutes(3),
          intervalMs: 2_000,
          message: "the cluster reports QuorumLost, the claims gone",
        },
      );
      // No membership change without a quorum: the lost servers are not made again by the cluster's own steps.
      await expect(client.get(Pod, n.pod(1), ns)).rejects.toThrow();

      const request: VaultRecovery = {
        apiVersion: VaultRecoveryKind.apiVersion,
        kind: VaultRecoveryKind.kind,
        metadata: { name: "qr-dr", namespace: ns },
        spec: { clusterName: name },
      };
      await client.create(VaultRecoveryKind, request);
      // Until it ends (a refusal ends it at once: it is reported, not waited out).
      const done = await eventually(
        async () => {
          const r = await client.get(VaultRecoveryKind, "qr-dr", ns);
          const phase = r.status?.phase;
          if (phase !== "Succeeded" && phase !== "Failed" && phase !== "Cancelled") {
            throw new Error(`phase ${phase} stage ${r.status?.stage}: ${r.status?.message}`);
          }
          return r;
        },
        { timeoutMs: minutes(10), intervalMs: 2_000, message: "the VaultRecovery ends" },
      );
      expect(done.status?.phase, done.status?.message).toBe("Succeeded");
      expect(done.status).toMatchObject({ survivor: n.pod(0), reason: "Recovered" });
      expect(done.status?.candidates?.find((c) => c.server === n.pod(0))?.appliedIndex).toBeGreaterThan(0);
      expect(done.metadata.finalizers ?? []).toEqual([]);

      await waitAvailable(client, ns, name, 3, minutes(6));
      const after = await waitVault(client, ns, name, 3);
      expect(after.clusterId).toBe(before.clusterId);
      for (const [pod, target] of after.targets) {
        expect(await kvGet(target, after.token, "dr/before"), pod).toEqual({ written: "before the loss" });
      }
      // The lost servers joined fresh on new claims; the survivor kept its data and its claim.
      for (const pod of lost) {
        const claim = await client.get(PersistentVolumeClaim, n.claim(pod), ns);
        expect(claim.metadata.creationTimestamp, n.claim(pod)).toBeDefined();
      }
      const writesAfter = await serviceTarget(client, ns, n.activeService, after.ca, name);
      await kvPut(writesAfter, after.token, "dr/after", { written: "after the recovery" });
      expect(await kvGet(writesAfter, after.token, "dr/after")).toEqual({ written: "after the recovery" });
    },
    minutes(25),
  );
});
