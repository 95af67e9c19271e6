// Tests of the Vault client against real Vault servers on 127.0.0.1 (the "real" test project): init,
// unseal, raft join, the operator's policy and token, step-down, remove-peer, and a node whose data was lost
// rejoining after its old peer is removed.
import { rm } from "node:fs/promises";
import { waitFor } from "@capstan/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { LocalVault, type LocalVaultNode, portsOf } from "./local-vault.ts";
import {
  OPERATOR_POLICY,
  OPERATOR_POLICY_NAME,
  OPERATOR_TOKEN_PERIOD,
  type VaultClient,
  VaultError,
} from "./vault-client.ts";

/** waitFor with this suite's patience: Vault's raft elections and joins take longer than etcd's. */
const eventually = <T>(what: string, check: () => Promise<T | undefined>, ms = 60_000): Promise<T> =>
  waitFor(what, check, ms, 250);

// Joins wait for autopilot to promote the new voters (its stabilization time is 10 s).
vi.setConfig({ testTimeout: 120_000 });

describe("VaultClient against real Vault servers", () => {
  let vault: LocalVault;
  let nodes: LocalVaultNode[];
  let keys: string[];
  let rootToken: string;
  let operatorToken: string;
  const clients: VaultClient[] = [];
  const client = (node: LocalVaultNode, token?: string) => {
    const c = vault.client(node, token);
    clients.push(c);
    return c;
  };
  const activeNode = async () =>
    eventually("an active node", async () => {
      for (const n of nodes) {
        const h = await client(n)
          .health()
          .catch(() => undefined);
        if (h?.initialized && !h.sealed && !h.standby) return n;
      }
      return undefined;
    });

  beforeAll(async () => {
    vault = await LocalVault.create();
    nodes = [await vault.start("n0"), await vault.start("n1"), await vault.start("n2")];
    await Promise.all(nodes.map((n) => eventually(`${n.name} answers`, () => client(n).health())));
  }, 120_000);
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await vault?.stop();
  });

  it("a fresh node reports uninitialized and sealed", async () => {
    const h = await client(nodes[0]!).health();
    expect(h).toMatchObject({ initialized: false, sealed: true });
    expect(h.version).toBe("1.14.8");
  });

  it("refuses a certificate that does not name the servername", async () => {
    const wrong = vault.client({ ...nodes[0]!, servername: "other.vault.test" });
    clients.push(wrong);
    const err = await wrong.health().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VaultError);
    expect((err as VaultError).status).toBe(0);
  });

  it("initializes once and unseals the first node", async () => {
    const c = client(nodes[0]!);
    const init = await c.init(3, 2);
    expect(init.keys).toHaveLength(3);
    expect(init.root_token).toMatch(/^hvs\./);
    keys = init.keys_base64;
    rootToken = init.root_token;
    // A second init is refused: the operator must never count on it.
    await expect(c.init(3, 2)).rejects.toMatchObject({ status: 400 });
    const status = await c.unsealWith(keys.slice(0, 2));
    expect(status).toMatchObject({ sealed: false, t: 2, n: 3 });
    expect(await activeNode()).toBe(nodes[0]);
  });

  it("joins the other nodes, which need the unseal keys to finish", async () => {
    const leader = nodes[0]!;
    for (const n of nodes.slice(1)) {
      const c = client(n);
      expect(
        await c.raftJoin({
          apiAddr: leader.apiAddr,
          caCert: vault.ca.cert,
          tlsServerName: leader.servername,
        }),
      ).toBe(true);
      await eventually(`${n.name} unsealed`, async () => {
        const s = await c.unsealWith(keys);
        return s.sealed ? undefined : s;
      });
      await eventually(`${n.name} standby`, async () => {
        const h = await c.health();
        return h.initialized && !h.sealed && h.standby ? h : undefined;
      });
    }
    const servers = await eventually("three raft voters", async () => {
      const s = await client(leader, rootToken).raftConfiguration();
      return s.length === 3 && s.every((x) => x.voter) ? s : undefined;
    });
    expect(servers.map((s) => s.node_id).sort()).toEqual(["n0", "n1", "n2"]);
    expect(servers.find((s) => s.leader)?.node_id).toBe("n0");
    const ids = new Set(await Promise.all(nodes.map(async (n) => (await client(n).health()).cluster_id)));
    expect(ids.size).toBe(1);
  });

  it("creates the operator's policy and periodic orphan token, which can do its job and no more", async () => {
    const root = client(nodes[0]!, rootToken);
    await root.writePolicy(OPERATOR_POLICY_NAME, OPERATOR_POLICY);
    operatorToken = await root.createOrphanToken({
      policies: [OPERATOR_POLICY_NAME],
      period: OPERATOR_TOKEN_PERIOD,
      displayName: "capstan-vault-operator",
    });
    const op = client(nodes[0]!, operatorToken);
    const info = await op.lookupSelf();
    expect(info).toMatchObject({ policies: [OPERATOR_POLICY_NAME], orphan: true, renewable: true });
    expect(info.period).toBe(768 * 3600);
    expect(await op.renewSelf()).toBe(768 * 3600);
    expect((await op.raftConfiguration()).length).toBe(3);
    expect((await op.autopilotState()).servers.n1).toBeDefined();
    await expect(op.writePolicy("mine", 'path "*" { capabilities = ["sudo"] }')).rejects.toMatchObject({
      status: 403,
    });
  });

  it("a standby forwards the raft configuration read to the active node", async () => {
    expect((await client(nodes[1]!, operatorToken).raftConfiguration()).length).toBe(3);
  });

  it("steps the active node down with the operator token: a standby takes over", async () => {
    const before = await activeNode();
    await client(before, operatorToken).stepDown();
    const after = await eventually("a new active node", async () => {
      const n = await activeNode();
      return n === before ? undefined : n;
    });
    expect(after).not.toBe(before);
  });

  it("a node whose data was lost rejoins once its old peer is removed", async () => {
    const active = await activeNode();
    const victim = nodes.find((n) => n !== active)!;
    const ports = portsOf(victim);
    await vault.kill(victim);
    await rm(vault.dataDir(victim.name), { recursive: true, force: true });
    await client(active, operatorToken).raftRemovePeer(victim.name);
    expect((await client(active, operatorToken).raftConfiguration()).map((s) => s.node_id)).not.toContain(
      victim.name,
    );
    const reborn = await vault.start(victim.name, ports);
    nodes = nodes.map((n) => (n === victim ? reborn : n));
    const c = client(reborn);
    const h = await eventually("the reborn node answers", () => c.health());
    expect(h).toMatchObject({ initialized: false, sealed: true });
    expect(
      await c.raftJoin({ apiAddr: active.apiAddr, caCert: vault.ca.cert, tlsServerName: active.servername }),
    ).toBe(true);
    await eventually("the reborn node unsealed", async () => {
      const s = await c.unsealWith(keys);
      return s.sealed ? undefined : s;
    });
    const servers = await eventually("three voters again", async () => {
      const s = await client(active, operatorToken).raftConfiguration();
      return s.length === 3 && s.every((x) => x.voter) ? s : undefined;
    });
    expect(servers.map((s) => s.node_id).sort()).toEqual(["n0", "n1", "n2"]);
  });

  it("a restarted node comes back sealed and is unsealed with the keys; it keeps its raft identity", async () => {
    const active = await activeNode();
    const victim = nodes.find((n) => n !== active)!;
    const ports = portsOf(victim);
    await vault.kill(victim);
    const again = await vault.start(victim.name, ports);
    nodes = nodes.map((n) => (n === victim ? again : n));
    const c = client(again);
    const h = await eventually("the restarted node answers", () => c.health());
    expect(h).toMatchObject({ initialized: true, sealed: true });
    const s = await c.unsealWith(keys);
    expect(s.sealed).toBe(false);
  });

  it("removes a peer for scale-in, and revokes the root token", async () => {
    const active = await activeNode();
    const victim = nodes.find((n) => n !== active)!;
    await client(active, operatorToken).raftRemovePeer(victim.name);
    await vault.kill(victim);
    nodes = nodes.filter((n) => n !== victim);
    const servers = await client(active, operatorToken).raftConfiguration();
    expect(servers.map((s) => s.node_id)).not.toContain(victim.name);
    expect(servers).toHaveLength(2);
    await client(active, rootToken).revokeSelf();
    await expect(client(active, rootToken).lookupSelf()).rejects.toMatchObject({ status: 403 });
  });

  it("generates a new root token with the unseal keys (a lost operator token)", async () => {
    const active = await activeNode();
    const root = await client(active).generateRoot(keys);
    expect(root).toMatch(/^hvs\./);
    const info = await client(active, root).lookupSelf();
    expect(info.policies).toEqual(["root"]);
    await client(active, root).revokeSelf();
    await expect(client(active).generateRoot(keys.slice(0, 1))).rejects.toThrow(/not enough/);
  });
});
