// The etcd client against a real etcd with authentication on (skipped when the binary is missing): turning auth
// on step by step, what an unauthenticated client is refused, every call the operator makes working with a token,
// a wrong password reported as such, a token invalidated by a member restart fetched again, and auth turned off.
import { execFile } from "node:child_process";
import { statSync } from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { waitFor } from "@capstan/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { classifyEtcdFailure } from "../plan/quorum-evidence.ts";
import { EtcdAuthError, EtcdClient, EtcdError } from "./etcd-client.ts";
import {
  haveLocalEtcd,
  LocalEtcd,
  type LocalMember,
  type LocalMemberSpec,
  localEtcdBinary,
} from "./local-etcd.ts";

const available = haveLocalEtcd();
const ROOT = { username: "root", password: "s3cret-root-pw" };

describe.skipIf(!available)("EtcdClient with etcd authentication", () => {
  let etcd: LocalEtcd;
  let seedSpec: LocalMemberSpec;
  let seed: LocalMember;
  let anonymous: EtcdClient;
  let root: EtcdClient;

  async function ready(url: string): Promise<void> {
    await waitFor(
      `${url} ready`,
      async () => ((await anonymous.health(url)).healthy ? true : undefined),
      60_000,
    );
  }

  beforeAll(async () => {
    etcd = await LocalEtcd.create();
    seedSpec = await etcd.allocate("a0");
    seed = etcd.start(seedSpec, [seedSpec], "new");
    anonymous = new EtcdClient({ endpoints: [seedSpec.clientURL], timeoutMs: 15_000 });
    root = new EtcdClient({ endpoints: [seedSpec.clientURL], timeoutMs: 15_000, auth: ROOT });
    await ready(seedSpec.clientURL);
  }, 90_000);

  afterAll(async () => {
    await etcd?.stop();
  });

  it("turns auth on: user root, role root, then AuthEnable (refused before the user exists)", async () => {
    expect(await anonymous.authStatus()).toMatchObject({ enabled: false });
    expect(await anonymous.userRoles("root")).toBeUndefined();
    // etcd refuses to enable auth without a root user: the operator's steps must come in this order.
    await expect(anonymous.authEnable()).rejects.toThrow(/root user does not exist/);
    await anonymous.userAdd("root", "an-older-password");
    await expect(anonymous.userAdd("root", ROOT.password)).rejects.toThrow(/user name already exists/);
    expect(await anonymous.userRoles("root")).toEqual([]);
    await anonymous.userGrantRole("root", "root");
    expect(await anonymous.userRoles("root")).toEqual(["root"]);
    // What EnableAuth does first: the password is the Secret's even when root existed with another one.
    await anonymous.userChangePassword("root", ROOT.password);
    // A client with credentials works while auth is still off (it sends no token until asked for one).
    await root.put("auth/before", "1");
    await anonymous.authEnable();
    expect(await root.authStatus()).toMatchObject({ enabled: true });
  });

  it("refuses an unauthenticated client, naming the missing credentials", async () => {
    const error = await anonymous.put("auth/anonymous", "x").catch((err: unknown) => err);
    expect(error).toBeInstanceOf(EtcdAuthError);
    expect((error as EtcdAuthError).reason).toBe("NoCredentials");
    expect((error as EtcdAuthError).message).toMatch(/user name is empty.*no credentials/);
    // Read from its text too (issue 27): an authentication failure, never evidence of a lost quorum.
    expect(classifyEtcdFailure((error as EtcdAuthError).message)).toBe("auth");
    // Status and the member list need a user too; readiness does not.
    await expect(anonymous.status(seedSpec.clientURL)).rejects.toBeInstanceOf(EtcdAuthError);
    await expect(anonymous.memberList()).rejects.toBeInstanceOf(EtcdAuthError);
    await expect(anonymous.authStatus()).rejects.toBeInstanceOf(EtcdAuthError);
    expect(await anonymous.health(seedSpec.clientURL)).toMatchObject({ healthy: true });
  });

  it("reports a wrong password as WrongPassword, without the password in the message", async () => {
    const wrong = new EtcdClient({
      endpoints: [seedSpec.clientURL],
      auth: { username: "root", password: "not-the-password" },
    });
    const error = await wrong.memberList().catch((err: unknown) => err);
    expect(error).toBeInstanceOf(EtcdAuthError);
    expect((error as EtcdAuthError).reason).toBe("WrongPassword");
    expect((error as EtcdAuthError).message).toContain("authentication failed");
    expect((error as EtcdAuthError).message).not.toContain("not-the-password");
  });

  it("makes every call the operator makes with root's token", async () => {
    const { revision } = await root.put("auth/key", "v");
    expect(await root.get("auth/key")).toBe("v");
    const { members } = await root.memberList({ linearizable: true });
    expect(members.map((m) => m.name)).toEqual(["a0"]);
    const status = await root.status(seedSpec.clientURL);
    expect(status.leader).toBe(status.memberId);
    expect(await root.alarmList()).toEqual([]);
    expect((await root.hashKV(seedSpec.clientURL, revision)).hashRevision).toBe(revision);
    await root.compact(revision);
    await root.defragment(seedSpec.clientURL);
  });

  it("adds, promotes and removes a learner with auth on", async () => {
    const spec = await etcd.allocate("a1");
    const added = await root.memberAddAsLearner([spec.peerURL]);
    etcd.start(spec, [seedSpec, spec], "existing");
    await waitFor(
      "the learner's promotion",
      async () => {
        await root.memberPromote(added.id);
        return true;
      },
      60_000,
    );
    const after = await root.memberList();
    expect(after.members.find((m) => m.id === added.id)).toMatchObject({ name: "a1", isLearner: false });
    const learnerClient = new EtcdClient({ endpoints: [spec.clientURL], auth: ROOT });
    expect((await learnerClient.status(spec.clientURL)).isLearner).toBe(false);
    // etcd refuses a removal as "unhealthy cluster" until the new voter has been connected for a few seconds.
    await waitFor(
      "the removal",
      async () => {
        await root.memberRemove(added.id);
        return true;
      },
      60_000,
    );
    expect((await root.memberList()).members.map((m) => m.name)).toEqual(["a0"]);
  }, 90_000);

  it("authenticates again when a member restart invalidates the cached token", async () => {
    // Simple tokens live in the member's memory: after a restart the cached one is "invalid auth token".
    await root.put("auth/restart", "before");
    seed.process.kill("SIGTERM");
    await seed.exited;
    seed = etcd.start(seedSpec, [seedSpec], "new");
    await ready(seedSpec.clientURL);
    const again = new EtcdClient({ endpoints: [seedSpec.clientURL], timeoutMs: 15_000, auth: ROOT });
    await waitFor("a write after the restart", async () => {
      await again.put("auth/restart", "after");
      return true;
    });
    expect(await root.get("auth/restart")).toBe("after");
  }, 90_000);

  it("lets etcdctl take a snapshot with the backup Job's ETCDCTL_USER and ETCDCTL_PASSWORD (and refuses it without)", async () => {
    const etcdctl = join(dirname(localEtcdBinary()), "etcdctl");
    const file = join(etcd.dir, "snapshot.db");
    const args = [`--endpoints=${seedSpec.clientURL}`, "snapshot", "save", file];
    const run = (env: Record<string, string>) =>
      promisify(execFile)(etcdctl, args, { env: { PATH: process.env.PATH ?? "", ...env } });
    await expect(run({})).rejects.toThrow(/user name is empty/);
    await run({ ETCDCTL_USER: "root", ETCDCTL_PASSWORD: ROOT.password });
    expect(statSync(file).size).toBeGreaterThan(0);
  });

  it("turns auth off with root's token; anyone may write again", async () => {
    await expect(anonymous.authDisable()).rejects.toBeInstanceOf(EtcdAuthError);
    await root.authDisable();
    expect(await anonymous.authStatus()).toMatchObject({ enabled: false });
    await anonymous.put("auth/after", "1");
    // The root client's cached token is ignored now that auth is off.
    expect(await root.get("auth/after")).toBe("1");
    const error = await anonymous.userAdd("root", "x").catch((err: unknown) => err);
    expect(error).toBeInstanceOf(EtcdError);
  });
});
