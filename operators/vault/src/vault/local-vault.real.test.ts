// The test kit's Vault servers against ports another process holds: a server that lost its port is started
// again on new ones, and one that cannot start is an error carrying its log, never a dead node returned as
// running (a CI run lost every later test to one such node).
import { createServer, type Server } from "node:net";
import { freePort } from "@capstan/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalVault } from "./local-vault.ts";

describe("LocalVault.start", () => {
  let holder: Server;
  let taken = 0;
  const vaults: LocalVault[] = [];

  beforeAll(async () => {
    holder = createServer();
    taken = await freePort();
    await new Promise<void>((resolve) => holder.listen(taken, "127.0.0.1", resolve));
  });
  afterAll(async () => {
    await Promise.all(vaults.map((v) => v.stop()));
    await new Promise<void>((resolve) => holder.close(() => resolve()));
  });

  it("starts again on new ports when the first one chosen is taken", async () => {
    const picks = [taken];
    const vault = await LocalVault.create(undefined, {
      pickPort: async () => picks.shift() ?? (await freePort()),
    });
    vaults.push(vault);
    const node = await vault.start("a");
    expect(new URL(node.apiAddr).port).not.toBe(String(taken));
    const client = vault.client(node);
    try {
      expect((await client.health()).initialized).toBe(false);
    } finally {
      await client.close();
    }
    expect(vault.log("a")).toMatch(/address already in use/);
  }, 60_000);

  it("fails with the server's log when given ports stay taken", async () => {
    const vault = await LocalVault.create();
    vaults.push(vault);
    await expect(vault.start("b", { api: taken, cluster: await freePort() })).rejects.toThrow(
      /Vault b exited with 1 before it started .*address already in use/s,
    );
    expect(vault.nodes).toEqual([]);
  }, 60_000);
});
