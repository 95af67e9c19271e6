// The survivor's peers.json against REAL Vault servers (the "real" test project): a 3-server raft cluster with a
// secret loses two servers; the survivor still says its own raft indexes without a quorum (sys/leader: the evidence
// the recovery chooses a survivor by); the init container's script (run here with sh, as the pod runs it) writes the
// peers.json the operator makes, naming the survivor alone; restarted and unsealed, the survivor is the leader and
// only voter, with its data. The script writes once per recovery and refuses a directory without raft data.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { waitFor } from "@capstan/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { LocalVault, type LocalVaultNode, portsOf } from "../vault/local-vault.ts";
import type { VaultClient } from "../vault/vault-client.ts";
import { type RaftPeerEntry, recoveryScript } from "./recovery-pod.ts";

const run = promisify(execFile);
const eventually = <T>(what: string, check: () => Promise<T | undefined>, ms = 90_000): Promise<T> =>
  waitFor(what, check, ms, 250);

// Joins wait for autopilot to promote the new voters (10 s), and the lone survivor for its leader lease to lapse.
vi.setConfig({ testTimeout: 240_000 });

describe("peers.json from the recovery's init container, against real Vault servers", () => {
  let vault: LocalVault;
  let nodes: LocalVaultNode[];
  let keys: string[];
  let root: string;
  const clients: VaultClient[] = [];
  const client = (node: LocalVaultNode, token?: string) => {
    const c = vault.client(node, token);
    clients.push(c);
    return c;
  };
  const script = (dataDir: string, peers: RaftPeerEntry[]) =>
    recoveryScript({ dataDir, peers, request: "dr", uid: "uid-1" });

  beforeAll(async () => {
    vault = await LocalVault.create();
    nodes = [await vault.start("s0"), await vault.start("s1"), await vault.start("s2")];
    const [s0] = nodes;
    await Promise.all(nodes.map((n) => eventually(`${n.name} answers`, () => client(n).health())));
    const init = await client(s0!).init(1, 1);
    keys = init.keys_base64;
    root = init.root_token;
    await client(s0!).unsealWith(keys);
    await eventually("s0 active", async () => ((await client(s0!).health()).standby ? undefined : true));
    for (const n of nodes.slice(1)) {
      await client(n).raftJoin({
        apiAddr: s0!.apiAddr,
        caCert: vault.ca.cert,
        tlsServerName: s0!.servername,
      });
      await eventually(`${n.name} unsealed`, async () => {
        const s = await client(n)
          .unsealWith(keys)
          .catch(() => undefined);
        return s === undefined || s.sealed ? undefined : s;
      });
    }
    await eventually("three voters", async () => {
      const s = await client(s0!, root).raftConfiguration();
      return s.length === 3 && s.every((x) => x.voter) ? s : undefined;
    });
    await client(s0!, root).call("POST", "/v1/sys/mounts/kv", { type: "kv" });
    await client(s0!, root).call("PUT", "/v1/kv/before", { written: "before the loss" });
  }, 240_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await vault?.stop();
  });

  it("a lone survivor of three, restarted on the peers.json the operator writes, leads alone with its data", async () => {
    const [s0, s1, s2] = nodes as [LocalVaultNode, LocalVaultNode, LocalVaultNode];
    const address = (await client(s0, root).raftConfiguration()).find((s) => s.node_id === "s0")?.address;
    expect(address).toBeDefined();
    // Two servers lost: s0 alone has no quorum; it still answers its own raft indexes (what the recovery compares).
    await vault.kill(s1, "SIGKILL");
    await vault.kill(s2, "SIGKILL");
    const alone = await eventually("s0 without a leader", async () => {
      const l = await client(s0).leader();
      return l.is_self || l.leader_address !== "" ? undefined : l;
    });
    expect(alone.raft_applied_index).toBeGreaterThan(0);
    await expect(client(s0, root).call("PUT", "/v1/kv/lost", { written: "no quorum" })).rejects.toThrow();

    // The fence: s0 stopped too; then the init container's script, then s0 started again on its data and unsealed.
    const ports = portsOf(s0);
    await vault.kill(s0);
    const dataDir = vault.dataDir("s0");
    const wrote = await run("sh", [
      "-c",
      script(dataDir, [{ id: "s0", address: address ?? "", non_voter: false }]),
    ]);
    expect(wrote.stdout).toContain("wrote");
    expect(existsSync(join(dataDir, "raft", "peers.json"))).toBe(true);
    const again = await vault.start("s0", ports);
    nodes = [again];
    await eventually("s0 answers", () => client(again).health());
    await client(again).unsealWith(keys);
    await eventually("s0 active alone", async () =>
      (await client(again).health()).standby ? undefined : true,
    );
    const servers = await client(again, root).raftConfiguration();
    expect(servers.map((s) => ({ id: s.node_id, voter: s.voter, leader: s.leader }))).toEqual([
      { id: "s0", voter: true, leader: true },
    ]);
    const got = await client(again, root).call<{ data: Record<string, string> }>("GET", "/v1/kv/before");
    expect(got.data).toEqual({ written: "before the loss" });
    await client(again, root).call("PUT", "/v1/kv/after", { written: "after the recovery" });
    // Vault consumed peers.json; the script run again (the pod's sandbox recreated) does not write it again.
    expect(existsSync(join(dataDir, "raft", "peers.json"))).toBe(false);
    const twice = await run("sh", ["-c", script(dataDir, [{ id: "s0", address: "x:1", non_voter: false }])]);
    expect(twice.stdout).toContain("was written before");
    expect(existsSync(join(dataDir, "raft", "peers.json"))).toBe(false);
  });

  it("refuses to write peers.json into a directory without raft data", async () => {
    const empty = await mkdtemp(join(tmpdir(), "capstan-no-raft-"));
    try {
      await mkdir(join(empty, "raft"));
      const failed = await run("sh", [
        "-c",
        script(empty, [{ id: "s0", address: "x:1", non_voter: false }]),
      ]).catch((e: unknown) => e as { code: number; stderr: string });
      expect(failed).toMatchObject({ code: 1 });
      expect((failed as { stderr: string }).stderr).toContain("no raft data");
      expect(existsSync(join(empty, "raft", "peers.json"))).toBe(false);
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });
});
