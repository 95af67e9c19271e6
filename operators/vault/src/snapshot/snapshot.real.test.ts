// Snapshots and restore against real Vault servers, with the operator's own pieces: the snapshot policy and token
// role as bootstrap writes them, a snapshot token made by a token of the operator's policy (it reads a snapshot and
// nothing else, and dies after its uses), `vault-snapshot-save` (the archive's SHA256SUMS checked), then a NEW Vault
// initialized with one temporary key, a snapshot-force-only token, `vault-snapshot-restore`, and what Vault does:
// it seals itself, the temporary key no longer opens it, nor (until Vault restarts and reads the restored seal
// configuration) do the snapshot's cluster's keys; after a restart they do, and the secret written before the
// snapshot is read back under the snapshot's cluster_id.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitFor } from "@capstan/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { LocalVault, type LocalVaultNode, portsOf } from "../vault/local-vault.ts";
import {
  OPERATOR_POLICY,
  OPERATOR_POLICY_NAME,
  RESTORE_POLICY,
  RESTORE_POLICY_NAME,
  SNAPSHOT_POLICY,
  SNAPSHOT_POLICY_NAME,
  SNAPSHOT_ROLE,
  SNAPSHOT_ROLE_BODY,
} from "../vault/policy.ts";
import { verifySnapshotFile } from "../vault/snapshot-archive.ts";
import { type VaultClient, VaultError } from "../vault/vault-client.ts";
import { restoreSnapshot, saveSnapshot } from "./commands.ts";

vi.setConfig({ testTimeout: 180_000 });

describe("raft snapshot and restore on real Vault", () => {
  let vault: LocalVault;
  let a: LocalVaultNode;
  let b: LocalVaultNode;
  const dir = mkdtempSync(join(tmpdir(), "capstan-vault-snapshot-"));
  const caFile = join(dir, "ca.crt");
  const clients: VaultClient[] = [];
  const client = (node: LocalVaultNode, token?: string) => {
    const c = vault.client(node, token);
    clients.push(c);
    return c;
  };
  const answers = (node: LocalVaultNode) =>
    waitFor(
      `${node.name} answers`,
      () =>
        client(node)
          .health()
          .catch(() => undefined),
      60_000,
      250,
    );
  const active = (node: LocalVaultNode) =>
    waitFor(
      `${node.name} is active`,
      async () => {
        const h = await client(node)
          .health()
          .catch(() => undefined);
        return h !== undefined && !h.sealed && !h.standby ? h : undefined;
      },
      60_000,
      250,
    );
  let aKeys: string[];
  let aRoot: string;
  let aClusterID: string;
  const file = join(dir, "snapshot.snap");

  beforeAll(async () => {
    vault = await LocalVault.create();
    writeFileSync(caFile, vault.ca.cert);
    a = await vault.start("a-0");
    await answers(a);
    const init = await client(a).init(3, 2);
    aKeys = init.keys_base64;
    aRoot = init.root_token;
    await client(a).unsealWith(aKeys);
    aClusterID = (await active(a)).cluster_id ?? "";
    const root = client(a, aRoot);
    // What the operator's BootstrapToken step writes.
    await root.writePolicy(OPERATOR_POLICY_NAME, OPERATOR_POLICY);
    await root.writePolicy(SNAPSHOT_POLICY_NAME, SNAPSHOT_POLICY);
    await root.writeTokenRole(SNAPSHOT_ROLE, { ...SNAPSHOT_ROLE_BODY });
    await root.call("POST", "/v1/sys/mounts/secret", { type: "kv", options: { version: "1" } });
    await root.call("PUT", "/v1/secret/app", { password: "before-the-snapshot" });
  }, 180_000);
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await vault?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("a token of the operator's policy makes a snapshot-only token, which vault-snapshot-save uses once per attempt", async () => {
    const operatorToken = await client(a, aRoot).createOrphanToken({
      policies: [OPERATOR_POLICY_NAME],
      period: "768h",
      displayName: "capstan-vault-operator",
    });
    // The operator may create tokens against the role, and nothing else of auth/token.
    await expect(
      client(a, operatorToken).createLimitedToken({
        policies: ["root"],
        ttl: "60s",
        numUses: 1,
        displayName: "x",
      }),
    ).rejects.toBeInstanceOf(VaultError);
    const token = await client(a, operatorToken).createLimitedToken({
      role: SNAPSHOT_ROLE,
      ttl: "600s",
      numUses: 3,
      displayName: "vault-snapshot-test",
    });
    // As root sees it (looking a token up does not use it): the snapshot policy alone, an orphan, three uses.
    const info = (
      await client(a, aRoot).call<{
        data: { policies: string[]; orphan: boolean; renewable: boolean; num_uses: number; ttl: number };
      }>("POST", "/v1/auth/token/lookup", { token })
    ).data;
    expect(info.policies).toEqual([SNAPSHOT_POLICY_NAME]);
    expect(info).toMatchObject({ orphan: true, renewable: false, num_uses: 3 });
    expect(info.ttl).toBeLessThanOrEqual(600);
    // It may not even look itself up (no default policy).
    await expect(client(a, token).lookupSelf()).rejects.toMatchObject({ status: 403 });
    const tokenFile = join(dir, "token");
    writeFileSync(tokenFile, token);
    const saved = await saveSnapshot({ address: a.apiAddr, caFile, tokenFile, to: file });
    expect(saved.size).toBeGreaterThan(0);
    expect(saved.index).toBeGreaterThan(0);
    expect(saved.term).toBeGreaterThan(0);
    const contents = await verifySnapshotFile(file);
    expect(contents.files.map((f) => f.name)).toEqual(
      expect.arrayContaining(["meta.json", "state.bin", "SHA256SUMS"]),
    );
    // Its uses run out (the refused lookup-self counted or not), then Vault has revoked it.
    const attempts: string[] = [];
    for (let i = 0; i < 3; i++) {
      await saveSnapshot({ address: a.apiAddr, caFile, tokenFile, to: join(dir, `again-${i}.snap`) }).then(
        () => attempts.push("ok"),
        (err: Error) => attempts.push(/HTTP 403/.test(err.message) ? "403" : err.message),
      );
    }
    expect(attempts.at(-1)).toBe("403");
    expect(attempts.filter((a) => a === "ok").length).toBeLessThanOrEqual(2);
    const left = await client(a, aRoot)
      .call("POST", "/v1/auth/token/lookup", { token })
      .then(
        () => "valid",
        (err: VaultError) => err.status,
      );
    expect(left).not.toBe("valid");
    // Another such token reads no secret.
    const reader = await client(a, operatorToken).createLimitedToken({
      role: SNAPSHOT_ROLE,
      ttl: "60s",
      numUses: 1,
      displayName: "vault-snapshot-test",
    });
    await expect(client(a, reader).call("GET", "/v1/secret/app")).rejects.toMatchObject({ status: 403 });
  });

  it("a damaged snapshot is refused before anything reaches Vault", async () => {
    const damaged = join(dir, "damaged.snap");
    const bytes = readFileSync(file);
    writeFileSync(damaged, bytes.subarray(0, Math.floor(bytes.length / 2)));
    await expect(
      restoreSnapshot({ address: a.apiAddr, caFile, tokenFile: join(dir, "token"), file: damaged }),
    ).rejects.toThrow(/failed its check, nothing was sent to Vault/);
  });

  it("restores into a new Vault: it seals itself, opens with the snapshot's keys only, and serves the secret", async () => {
    b = await vault.start("b-0");
    await answers(b);
    const temp = await client(b).init(1, 1);
    await client(b).unsealWith(temp.keys_base64);
    const tempID = (await active(b)).cluster_id;
    expect(tempID).not.toBe(aClusterID);
    const root = client(b, temp.root_token);
    await root.writePolicy(RESTORE_POLICY_NAME, RESTORE_POLICY);
    const token = await root.createLimitedToken({
      policies: [RESTORE_POLICY_NAME],
      ttl: "600s",
      numUses: 3,
      displayName: "vault-restore",
    });
    // The restore token reads nothing.
    await expect(client(b, token).call("GET", "/v1/sys/storage/raft/snapshot")).rejects.toMatchObject({
      status: 403,
    });
    const tokenFile = join(dir, "restore-token");
    writeFileSync(tokenFile, token);
    const restored = await restoreSnapshot({ address: b.apiAddr, caFile, tokenFile, file });
    expect(restored.sha256).toMatch(/^[0-9a-f]{64}$/);

    // The restored keyring is the snapshot's: Vault seals itself.
    await waitFor(
      "b-0 seals itself",
      async () =>
        (
          await client(b)
            .health()
            .catch(() => undefined)
        )?.sealed,
      60_000,
      250,
    );
    // The temporary key no longer opens it.
    await expect(client(b).unsealWith(temp.keys_base64)).rejects.toBeInstanceOf(VaultError);
    await client(b).resetUnseal();
    // Nor do the snapshot's keys, yet: Vault keeps the temporary seal configuration (one share) in memory.
    expect(await client(b).sealStatus()).toMatchObject({ sealed: true, t: 1, n: 1 });
    await expect(client(b).unsealWith(aKeys)).rejects.toThrow(/invalid key/);
    await client(b)
      .resetUnseal()
      .catch(() => undefined);
    // Restarted on its data, it reads the restored one: the snapshot's cluster's (2 of 3).
    const ports = portsOf(b);
    await vault.kill(b);
    b = await vault.start("b-0", ports);
    await answers(b);
    expect(await client(b).sealStatus()).toMatchObject({ sealed: true, t: 2, n: 3 });
    // The snapshot's cluster's keys do.
    const st = await client(b).unsealWith(aKeys);
    expect(st.sealed).toBe(false);
    const h = await active(b);
    expect(h.cluster_id).toBe(aClusterID);
    const read = await client(b, aRoot).call<{ data: { password: string } }>("GET", "/v1/secret/app");
    expect(read.data.password).toBe("before-the-snapshot");
  });
});
