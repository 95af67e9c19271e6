// The operator killed at the worst moments: during init (the cluster is initialized exactly once: the keys first
// written still unseal it, no second init) and during a scale-out (it resumes and converges with no extra raft
// peer). One cluster, steps in order.
import { type Client, Pod } from "@capstan/core";
import { connect, createNamespace, eventually, type TestNamespace } from "@capstan/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  installOperator,
  killOperator,
  type OperatorRelease,
  operatorPods,
  vaultSuitesEnabled,
} from "./fixtures/operator-release.ts";
import { names, VaultClusterKind } from "./fixtures/vault-api.ts";
import {
  initCount,
  keysSecret,
  ownedObjects,
  podReady,
  printFailureReport,
  secretExists,
  tearDownSuite,
  vaultCluster,
  vaultPods,
  waitAvailable,
  waitVault,
} from "./fixtures/vault-cluster.ts";

const name = "faults";
const minutes = (n: number) => n * 60_000;

let client: Client;
let nsObj: TestNamespace;
let op: OperatorRelease | undefined;
let ns = "";

/** Waits until a new operator pod (not one of `killed`) is ready. */
function operatorBack(killed: string[]) {
  return eventually(
    async () => {
      const pods = await operatorPods(client, op!);
      return pods.some((p) => !killed.includes(p.metadata.name ?? "") && podReady(p));
    },
    { timeoutMs: minutes(3), intervalMs: 1_000, message: "a new operator pod is ready" },
  );
}

/** The unseal keys in the Secret, in order. */
async function unsealKeys(): Promise<string[]> {
  const keys = await keysSecret(client, ns, name);
  return Object.keys(keys)
    .filter((k) => k.startsWith("unseal-key-"))
    .sort()
    .map((k) => keys[k] ?? "");
}

describe.skipIf(!vaultSuitesEnabled)("Vault operator faults", () => {
  beforeAll(async () => {
    ({ client } = connect());
    nsObj = await createNamespace(client, "vault-faults");
    ns = nsObj.name;
    op = await installOperator(client, ns, ns);
  }, minutes(5));

  afterAll(() => tearDownSuite(client, [{ namespace: ns, name }], op, [nsObj]), minutes(5));

  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => printFailureReport(client, ns, name, op));
  });

  it(
    "killed during init: the cluster is initialized once, with the keys first written",
    async () => {
      await client.create(VaultClusterKind, vaultCluster(ns, name));
      // Kill at the first sign of init: the keys Secret written (the operator writes it before anything else),
      // or the first pod up and answering.
      const seen = await eventually(
        async () => {
          if (await secretExists(client, ns, names(name).keys)) return "keys Secret written";
          const c = await client.get(VaultClusterKind, name, ns);
          if (c.status?.phase === "Initializing") return "phase Initializing";
          return false;
        },
        { timeoutMs: minutes(4), intervalMs: 100, message: "init begins" },
      );
      const killed = await killOperator(client, op!);
      const keysAtKill = (await secretExists(client, ns, names(name).keys)) ? await unsealKeys() : [];
      console.log(`killed ${killed.join(", ")} at: ${seen}; ${keysAtKill.length} unseal keys then`);
      await operatorBack(killed);

      const c = await waitAvailable(client, ns, name, 3, minutes(6));
      const view = await waitVault(client, ns, name, 3);
      const keys = await unsealKeys();
      expect(keys.length).toBeGreaterThan(0);
      // The keys written before the kill are the ones that unseal the cluster: no second init replaced them.
      if (keysAtKill.length > 0) expect(keys).toEqual(keysAtKill);
      expect(c.status?.clusterID).toBe(view.clusterId);
      expect(await initCount(client, ns, name), "init steps taken").toBe(1);
      expect(c.status?.conditions?.find((x) => x.type === "Degraded")?.status).not.toBe("True");
    },
    minutes(10),
  );

  it(
    "killed during a scale-out: it resumes and converges on 5 pods and 5 raft peers, nothing extra",
    async () => {
      const v3 = await waitVault(client, ns, name, 3);
      await client.patch(VaultClusterKind, name, ns, { spec: { replicas: 5 } }, "merge", {
        subresource: "scale",
      });
      // Kill at the first sign of the scale-out: a 4th pod, or a 4th raft peer.
      const seen = await eventually(
        async () => {
          const pods = await vaultPods(client, ns, name);
          if (pods.length > 3) return `${pods.length} pods (${pods.map((p) => p.metadata.name).join(", ")})`;
          return false;
        },
        { timeoutMs: minutes(3), intervalMs: 100, message: "the scale-out begins" },
      );
      const killed = await killOperator(client, op!);
      console.log(`killed ${killed.join(", ")} at: ${seen}`);
      await operatorBack(killed);

      await waitAvailable(client, ns, name, 5, minutes(8));
      const v5 = await waitVault(client, ns, name, 5);
      const pods = [0, 1, 2, 3, 4].map(names(name).pod);
      expect([...v5.targets.keys()]).toEqual(pods);
      expect(v5.clusterId).toBe(v3.clusterId);
      await eventually(
        async () => {
          const owned = await ownedObjects(client, ns, name);
          expect(owned.pods).toEqual(pods);
          expect(owned.pvcs).toEqual(pods.map(names(name).claim).sort());
        },
        { timeoutMs: 120_000, intervalMs: 1_000, message: "one pod and one claim per raft peer" },
      );
      // No pod restarted into a second cluster of its own: every pod's Vault has the one cluster ID (checkVault).
      for (const p of pods) expect((await client.get(Pod, p, ns)).metadata.deletionTimestamp).toBeUndefined();
    },
    minutes(12),
  );
});
