// Scale 3 -> 5 -> 3 through the scale subresource: after each step the raft peers are exactly the pods (no dead
// peer left, bank-vaults/vault-operator#796), the removed pods' claims are deleted, and a secret written before
// is read back from every pod.
import { type Client, PersistentVolumeClaim } from "@capstan/core";
import { connect, createNamespace, eventually, type TestNamespace } from "@capstan/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { installOperator, type OperatorRelease, vaultSuitesEnabled } from "./fixtures/operator-release.ts";
import { names, VaultClusterKind } from "./fixtures/vault-api.ts";
import {
  ownedObjects,
  printFailureReport,
  serviceTarget,
  tearDownSuite,
  type VaultView,
  vaultCluster,
  waitAvailable,
  waitVault,
} from "./fixtures/vault-cluster.ts";
import { enableKv, kvGet, kvPut } from "./fixtures/vault-http.ts";

const name = "scale";
const minutes = (n: number) => n * 60_000;

let client: Client;
let nsObj: TestNamespace;
let op: OperatorRelease | undefined;
let ns = "";

/** Reads the secret from every pod (standbys forward to the active). */
async function readEverywhere(view: VaultView, key: string): Promise<Record<string, unknown>> {
  const got: Record<string, unknown> = {};
  for (const [pod, target] of view.targets) got[pod] = await kvGet(target, view.token, key);
  return got;
}

/** The cluster's pods, claims and status peers all name exactly `pods`. */
async function expectOnly(pods: string[]) {
  await eventually(
    async () => {
      const owned = await ownedObjects(client, ns, name);
      expect(owned.pods).toEqual(pods);
      expect(owned.pvcs).toEqual(pods.map(names(name).claim).sort());
      const c = await client.get(VaultClusterKind, name, ns);
      expect(c.status?.raftPeers?.map((p) => p.nodeID).sort()).toEqual(pods);
    },
    { timeoutMs: 120_000, intervalMs: 1_000, message: `only ${pods.join(", ")} are left` },
  );
}

describe.skipIf(!vaultSuitesEnabled)("VaultCluster scaling", () => {
  beforeAll(async () => {
    ({ client } = connect());
    nsObj = await createNamespace(client, "vault-scale");
    ns = nsObj.name;
    op = await installOperator(client, ns, ns);
    await client.create(VaultClusterKind, vaultCluster(ns, name));
  }, minutes(5));

  afterAll(() => tearDownSuite(client, [{ namespace: ns, name }], op, [nsObj]), minutes(5));

  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => printFailureReport(client, ns, name, op));
  });

  it(
    "3 -> 5 -> 3: raft peers equal the pods after each step, and the data is read from every pod",
    async () => {
      const n = names(name);
      await waitAvailable(client, ns, name, 3, minutes(6));
      const v3 = await waitVault(client, ns, name, 3);
      const activeSvc = await serviceTarget(client, ns, n.activeService, v3.ca, name);
      await enableKv(activeSvc, v3.token);
      await kvPut(activeSvc, v3.token, "scale/before", { at: "3" });

      await client.patch(VaultClusterKind, name, ns, { spec: { replicas: 5 } }, "merge", {
        subresource: "scale",
      });
      await waitAvailable(client, ns, name, 5, minutes(6));
      const v5 = await waitVault(client, ns, name, 5);
      expect([...v5.targets.keys()]).toEqual([0, 1, 2, 3, 4].map(n.pod));
      expect(v5.clusterId).toBe(v3.clusterId);
      await expectOnly([0, 1, 2, 3, 4].map(n.pod));
      const want = Object.fromEntries([...v5.targets.keys()].map((p) => [p, { at: "3" }]));
      expect(await readEverywhere(v5, "scale/before")).toEqual(want);
      await kvPut(activeSvc, v5.token, "scale/at-five", { at: "5" });

      await client.patch(VaultClusterKind, name, ns, { spec: { replicas: 3 } });
      await waitAvailable(client, ns, name, 3, minutes(6));
      const back = await waitVault(client, ns, name, 3);
      // Scale-in removes the highest ordinals: their raft peers first, then their pods and claims.
      expect([...back.targets.keys()]).toEqual([0, 1, 2].map(n.pod));
      await expectOnly([0, 1, 2].map(n.pod));
      for (const pod of [3, 4].map(n.pod)) {
        await expect(client.get(PersistentVolumeClaim, n.claim(pod), ns), n.claim(pod)).rejects.toThrow();
      }
      const want3 = Object.fromEntries([...back.targets.keys()].map((p) => [p, { at: "5" }]));
      expect(await readEverywhere(back, "scale/at-five")).toEqual(want3);
      expect(back.clusterId).toBe(v3.clusterId);
    },
    minutes(16),
  );
});
