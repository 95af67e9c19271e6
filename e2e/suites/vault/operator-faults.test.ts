// The operator killed at the worst moments: during init, once Vault's answer (the keys) is in the Secret (the new
// operator finishes the bootstrap with those keys: no second init) and during a scale-out (it resumes and
// converges with no extra raft peer), on one cluster, steps in order; and, on a second cluster, with the init
// answer in flight (Vault initialized, the answer lost with the operator): Degraded InitResponseLost with the
// remediation, never a second init, and the remediation (a new cluster on fresh claims) works.
import { type Client, PersistentVolumeClaim, Pod, Secret } from "@capstan/core";
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
  deleteCluster,
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
/** The operator's mark on the first claim before it calls PUT /v1/sys/init. */
const INIT_STARTED = "vault.capstan.dev/init-started";
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

  afterAll(
    () =>
      tearDownSuite(
        client,
        [
          { namespace: ns, name },
          { namespace: ns, name: "lost" },
        ],
        op,
        [nsObj],
      ),
    minutes(5),
  );

  beforeEach(({ onTestFailed }) => {
    onTestFailed(async () => {
      await printFailureReport(client, ns, name, op);
      await printFailureReport(client, ns, "lost", undefined);
    });
  });

  it(
    "killed during init, once the keys are stored: the new operator finishes with them, no second init",
    async () => {
      await client.create(VaultClusterKind, vaultCluster(ns, name));
      // Kill as soon as Vault's answer is in the Secret (the unseal, the operator token and the scale-out follow).
      await eventually(
        async () => (await secretExists(client, ns, names(name).keys)) && (await unsealKeys()).length > 0,
        {
          timeoutMs: minutes(4),
          intervalMs: 100,
          message: "the keys Secret holds the unseal keys",
        },
      );
      const killed = await killOperator(client, op!);
      const keysAtKill = await unsealKeys();
      const stored = await keysSecret(client, ns, name);
      console.log(
        `killed ${killed.join(", ")} with ${keysAtKill.length} unseal keys stored; operator-token ${stored["operator-token"] ? "stored" : "not yet"}`,
      );
      await operatorBack(killed);

      const c = await waitAvailable(client, ns, name, 3, minutes(6));
      const view = await waitVault(client, ns, name, 3);
      // The keys stored before the kill are the ones that unseal the cluster: no second init replaced them.
      expect(await unsealKeys()).toEqual(keysAtKill);
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
  it(
    "killed with the init answer in flight: Degraded InitResponseLost with the remediation, never a second init",
    async () => {
      const lost = "lost";
      // Kill as soon as the init-started marker is written (an annotation on the first pod's claim, before
      // PUT /v1/sys/init): the init is about to be sent or in flight, and its answer dies with the operator.
      await client.create(VaultClusterKind, vaultCluster(ns, lost, { replicas: 1 }));
      await eventually(
        async () => {
          const claim = await client.get(PersistentVolumeClaim, names(lost).claim(names(lost).pod(0)), ns);
          return claim.metadata.annotations?.[INIT_STARTED] !== undefined;
        },
        { timeoutMs: minutes(4), intervalMs: 50, message: "the init-started marker is written" },
      );
      const killed = await killOperator(client, op!);
      await operatorBack(killed);
      const outcome = await eventually(
        async () => {
          const c = await client.get(VaultClusterKind, lost, ns);
          const degraded = c.status?.conditions?.find((x) => x.type === "Degraded");
          if (degraded?.status === "True" && degraded.reason === "InitResponseLost") return { lost: true, c };
          if (c.status?.conditions?.find((x) => x.type === "Available")?.status === "True")
            return { lost: false, c };
          return false;
        },
        { timeoutMs: minutes(5), intervalMs: 1_000, message: "Degraded InitResponseLost, or Available" },
      );
      console.log(
        `init kill: ${outcome.lost ? "the init answer was lost" : "the kill missed the init answer"}`,
      );
      if (outcome.lost) {
        const degraded = outcome.c.status?.conditions?.find((x) => x.type === "Degraded");
        // The remediation is in the message: the claims and the keys Secret.
        expect(degraded?.message).toMatch(/claims/);
        expect(degraded?.message).toMatch(/keys Secret/);
        expect(outcome.c.status?.phase).toBe("Degraded");
        // Never a second init: no init step taken, and no keys appear.
        expect(await initCount(client, ns, lost)).toBe(0);
        const keys = (await secretExists(client, ns, names(lost).keys))
          ? await keysSecret(client, ns, lost)
          : {};
        expect(Object.keys(keys).filter((k) => k.startsWith("unseal-key-"))).toEqual([]);
        // The remediation as the docs give it: a new cluster on fresh claims.
        await deleteCluster(client, ns, lost);
        await client.delete(Secret, names(lost).keys, ns).catch(() => undefined); // created only with keys
        // The claims are kept when a VaultCluster is deleted (storage.whenDeleted Retain): deleted by hand.
        for (const pvc of (await ownedObjects(client, ns, lost)).pvcs)
          await client.delete(PersistentVolumeClaim, pvc, ns).catch(() => undefined);
        await eventually(async () => (await ownedObjects(client, ns, lost)).pvcs.length === 0, {
          timeoutMs: minutes(2),
          message: "the lost cluster's claims are gone",
        });
        await client.create(VaultClusterKind, vaultCluster(ns, lost, { replicas: 1 }));
      }
      await waitAvailable(client, ns, lost, 1, minutes(5));
      expect(await initCount(client, ns, lost)).toBe(1);
    },
    minutes(14),
  );
});
