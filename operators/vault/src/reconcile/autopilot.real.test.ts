// spec.autopilot against a REAL Vault (the "real" test project): the configuration is written once and read back
// equal, the steady state writes nothing; with the policy of an older operator (no autopilot configuration path)
// Vault answers 403, the cluster is Degraded AutopilotForbidden, and the command its message names, run with the
// vault CLI and a root token, lets the next reconcile write it.
import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import type { KubeObject, SecretObject } from "@capstan/core";
import { Registry } from "prom-client";
import { afterAll, describe, expect, it, vi } from "vitest";
import { type VaultCluster, VaultClusterKind } from "../api/vault-cluster.ts";
import { LocalVault, localVaultBinary } from "../vault/local-vault.ts";
import { AUTOPILOT_CONFIGURATION_PATH, OPERATOR_POLICY, OPERATOR_POLICY_NAME } from "../vault/policy.ts";
import { VaultOperatorMetrics } from "./metrics.ts";
import { readKeys } from "./observe.ts";
import { convergeReal, Pods, type RealCluster, reconcileReal } from "./real-fixture.ts";
import { serverKeeper } from "./test-fixture.ts";

vi.setConfig({ testTimeout: 180_000 });

const base: VaultCluster = {
  apiVersion: VaultClusterKind.apiVersion,
  kind: VaultClusterKind.kind,
  metadata: { name: "demo", namespace: "ns", uid: "u-autopilot", generation: 1 },
  spec: {
    replicas: 1,
    version: "1.14.8",
    repository: "hashicorp/vault",
    storage: { size: "1Gi" },
    tls: { duration: "2160h", renewBefore: "720h" },
    unseal: { shares: 1, threshold: 1, keepRootToken: false, retainKeysOnDelete: true },
  },
};

/** The policy an operator without autopilot wrote: today's less the configuration path. */
const OLD_POLICY = OPERATOR_POLICY.replace(
  `path "${AUTOPILOT_CONFIGURATION_PATH}" {\n  capabilities = ["read", "update"]\n}\n`,
  "",
);

describe("spec.autopilot against a real Vault", () => {
  let real: RealCluster;
  let objects: KubeObject[] = [];
  afterAll(async () => {
    await real?.pods.stop();
  });
  const keys = () =>
    readKeys(
      objects.find((o) => o.kind === "Secret" && o.metadata.name === "demo-unseal-keys") as SecretObject,
    ).material;
  const vaultAs = (token: string) => real.pods.vault.client(real.pods.nodes.get("demo-0")!, token);
  const status = () => (objects.find((o) => o.kind === "VaultCluster") as VaultCluster).status;
  const autopilot = { lastContactThreshold: "5s", maxTrailingLogs: 500, serverStabilizationTime: "30s" };

  it("writes the configuration once, reads it back equal, and writes nothing in the steady state", async () => {
    expect(OLD_POLICY).not.toContain(AUTOPILOT_CONFIGURATION_PATH);
    real = {
      base,
      pods: new Pods(await LocalVault.create()),
      metrics: new VaultOperatorMetrics(new Registry()),
      keeper: serverKeeper(),
      plan: { initGraceMs: 5_000 },
    };
    objects = (await convergeReal(real, [], {})).objects;
    const r = await convergeReal(real, objects, { autopilot });
    objects = r.objects;
    expect(r.taken.filter((s) => s.startsWith("ConfigureAutopilot"))).toEqual(["ConfigureAutopilot demo-0"]);
    const op = vaultAs(keys().operatorToken!);
    expect(await op.autopilotConfiguration()).toMatchObject({
      cleanup_dead_servers: false,
      dead_server_last_contact_threshold: "24h0m0s",
      last_contact_threshold: "5s",
      max_trailing_logs: 500,
      server_stabilization_time: "30s",
    });
    await op.close();
    expect(status()?.autopilot).toEqual({
      healthy: true,
      failureTolerance: 0,
      voters: ["demo-0"],
      leader: "demo-0",
    });
    const steady = await reconcileReal(real, objects);
    steady.expectNoWrites();
    expect(steady.events).toEqual([]);
  });

  it("the policy of an older operator: 403, Degraded AutopilotForbidden; its command fixes it", async () => {
    // An older operator's policy, written with a root token made from the unseal keys.
    const node = real.pods.nodes.get("demo-0")!;
    const unauthenticated = real.pods.vault.client(node);
    const root = await unauthenticated.generateRoot(keys().unsealKeys);
    await unauthenticated.close();
    const admin = vaultAs(root);
    await admin.writePolicy(OPERATOR_POLICY_NAME, OLD_POLICY);

    const refused = await convergeReal(
      real,
      objects,
      { autopilot: { ...autopilot, maxTrailingLogs: 600 } },
      {
        max: 5,
        done: (st) => st?.conditions?.some((c) => c.type === "Degraded" && c.status === "True") === true,
      },
    );
    objects = refused.objects;
    const degraded = status()?.conditions?.find((c) => c.type === "Degraded");
    expect(degraded).toMatchObject({ status: "True", reason: "AutopilotForbidden" });
    expect(degraded?.message).toContain("HTTP 403");
    expect(refused.taken).toEqual([]);
    expect((await admin.autopilotConfiguration()).max_trailing_logs).toBe(500);

    // The admin runs the command the message names, as it is, with the vault CLI.
    const command = degraded?.message.split("(VAULT_ADDR, VAULT_TOKEN set): ")[1] ?? "";
    expect(command).toMatch(/^\{ vault policy read /);
    const caFile = join(real.pods.vault.dir, "ca.pem");
    await writeFile(caFile, real.pods.vault.ca.cert);
    await promisify(execFile)("sh", ["-c", command], {
      cwd: real.pods.vault.dir,
      env: {
        PATH: `${dirname(localVaultBinary())}:${process.env.PATH ?? "/usr/bin:/bin"}`,
        HOME: real.pods.vault.dir,
        VAULT_ADDR: node.apiAddr,
        VAULT_CACERT: caFile,
        VAULT_TLS_SERVER_NAME: node.servername,
        VAULT_TOKEN: root,
      },
    });
    const fixed = await convergeReal(real, objects, { autopilot: { ...autopilot, maxTrailingLogs: 600 } });
    objects = fixed.objects;
    expect(fixed.taken).toEqual(["ConfigureAutopilot demo-0"]);
    expect((await admin.autopilotConfiguration()).max_trailing_logs).toBe(600);
    expect(status()?.conditions?.find((c) => c.type === "Degraded")?.status).toBe("False");
    await admin.revokeSelf();
    await admin.close();
  });
});
