// What a real Vault answers to unseal keys that cannot unseal it, and how the operator judges it
// (plan/unseal.ts): keys of another cluster and duplicated keys are UnsealKeysInvalid; a Secret with fewer keys
// than the threshold Vault reports in seal-status is UnsealKeysInsufficient.
import { randomBytes } from "node:crypto";
import { waitFor } from "@capstan/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { judgeUnsealOutcome } from "../plan/unseal.ts";
import { LocalVault, type LocalVaultNode, portsOf } from "./local-vault.ts";
import { type VaultClient, VaultError } from "./vault-client.ts";

vi.setConfig({ testTimeout: 120_000 });

describe("unseal keys a real Vault refuses", () => {
  let vault: LocalVault;
  let node: LocalVaultNode;
  let keys: string[];
  const clients: VaultClient[] = [];
  const client = () => {
    const c = vault.client(node);
    clients.push(c);
    return c;
  };
  /** Kills and starts the node again: it comes back sealed, with no unseal progress. */
  const restart = async () => {
    const ports = portsOf(node);
    await vault.kill(node);
    node = await vault.start(node.name, ports);
    await waitFor(
      "the node answers sealed",
      async () =>
        (
          await client()
            .health()
            .catch(() => undefined)
        )?.sealed,
      60_000,
      250,
    );
  };

  beforeAll(async () => {
    vault = await LocalVault.create();
    node = await vault.start("k0");
    await waitFor(
      "k0 answers",
      () =>
        client()
          .health()
          .catch(() => undefined),
      60_000,
      250,
    );
    const init = await client().init(3, 2);
    keys = init.keys_base64;
    await restart();
  }, 120_000);
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await vault?.stop();
  });

  it("keys of another cluster: Vault answers an error, judged UnsealKeysInvalid", async () => {
    const foreign = [randomBytes(33).toString("base64"), randomBytes(33).toString("base64")];
    const err = await client()
      .unsealWith(foreign)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VaultError);
    const { status, errors } = err as VaultError;
    // Vault 1.14: 400 "unable to retrieve stored keys: invalid key: failed to decrypt keys from storage: ..."
    expect(status).toBe(400);
    expect(errors.join(" ")).toMatch(/invalid key/);
    expect(judgeUnsealOutcome("k0", { error: { status, errors } }, 2, 2)).toMatchObject({
      type: "Degraded",
      reason: "UnsealKeysInvalid",
    });
    // The failed attempt reset the progress: the right keys still unseal it.
    expect((await client().sealStatus()).progress).toBe(0);
  });

  it("a key that is no base64: judged UnsealKeysInvalid", async () => {
    const err = await client()
      .unseal("not a key!")
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VaultError);
    const { status, errors } = err as VaultError;
    expect(judgeUnsealOutcome("k0", { error: { status, errors } }, 2, 2)).toMatchObject({
      reason: "UnsealKeysInvalid",
    });
  });

  it("the same key twice: still sealed after every key, judged UnsealKeysInvalid", async () => {
    const status = await client().unsealWith([keys[0]!, keys[0]!]);
    expect(status.sealed).toBe(true);
    expect(status.progress).toBeLessThan(status.t);
    expect(
      judgeUnsealOutcome(
        "k0",
        { stillSealed: true, message: `still sealed after ${status.progress}` },
        2,
        status.t,
      ),
    ).toMatchObject({ reason: "UnsealKeysInvalid" });
  });

  it("seal-status reports the threshold the planner compares the Secret's keys with", async () => {
    expect(await client().sealStatus()).toMatchObject({ sealed: true, t: 2, n: 3 });
  });

  it("the right keys unseal it", async () => {
    await restart();
    expect((await client().unsealWith(keys)).sealed).toBe(false);
  });
});
