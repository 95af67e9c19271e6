// What etcd itself does in the situations the operator's safety rules rely on, against real etcd processes on
// 127.0.0.1 (skipped when the binary is missing): a linearizable member list needs a quorum; a member restarted
// as "existing" with only itself in --initial-cluster refuses an empty data directory (and rejoins on its data);
// a full database raises NOSPACE, and compact + defragment + disarm recover it.
import { rm } from "node:fs/promises";
import { waitFor } from "@capstan/testing";
import { afterEach, describe, expect, it } from "vitest";
import { EtcdClient, EtcdError } from "./etcd-client.ts";
import { haveLocalEtcd, LocalEtcd, type LocalMemberSpec, localEtcdBinary } from "./local-etcd.ts";

const available = haveLocalEtcd();
if (!available) console.warn(`etcd safety tests skipped: ${localEtcdBinary()} is missing`);

describe.skipIf(!available)("etcd under the operator's safety rules", () => {
  let etcd: LocalEtcd | undefined;
  afterEach(async () => {
    await etcd?.stop();
    etcd = undefined;
  });

  /** A healthy cluster of `n` members m0..m(n-1), with extra flags. */
  async function start(n: number, extraArgs: string[] = []) {
    etcd = await LocalEtcd.create();
    const specs: LocalMemberSpec[] = [];
    for (let i = 0; i < n; i++) specs.push(await etcd.allocate(`m${i}`));
    const procs = specs.map((s) => etcd!.start(s, specs, "new", extraArgs));
    const client = new EtcdClient({ endpoints: specs.map((s) => s.clientURL), timeoutMs: 10_000 });
    for (const s of specs) {
      await waitFor(`${s.name} ready`, async () =>
        (await client.health(s.clientURL)).healthy ? true : undefined,
      );
    }
    return { etcd, specs, procs, client };
  }

  it("reads the member list linearizably only with a quorum (the serializable read answers without one)", async () => {
    const { procs, specs } = await start(3);
    procs[1]!.process.kill("SIGKILL");
    procs[2]!.process.kill("SIGKILL");
    await Promise.all([procs[1]!.exited, procs[2]!.exited]);
    const survivor = new EtcdClient({ endpoints: [specs[0]!.clientURL], timeoutMs: 4_000 });
    // The survivor's own view still lists all three: absence or presence is not confirmed by it.
    expect((await survivor.memberList()).members).toHaveLength(3);
    const error = await survivor.memberList({ linearizable: true }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(EtcdError);
  }, 60_000);

  it("refuses to restart a member as existing on an empty data dir when --initial-cluster names only itself", async () => {
    const { etcd, specs, procs, client } = await start(3);
    const before = (await client.memberList()).members;
    const victim = procs[2]!;
    victim.process.kill("SIGKILL");
    await victim.exited;
    await rm(etcd.dataDir("m2"), { recursive: true, force: true });

    // The operator restarts a started member with only itself in --initial-cluster: etcd cannot learn the
    // cluster from anyone, so an empty data dir stops it instead of rejoining under its old ID.
    const restarted = etcd.start(specs[2]!, [specs[2]!], "existing");
    const code = await Promise.race([
      restarted.exited,
      new Promise<"running">((resolve) => setTimeout(() => resolve("running"), 20_000)),
    ]);
    expect(code).not.toBe("running");
    expect(code).not.toBe(0);
    expect(etcd.log("m2")).toContain("cannot fetch cluster info from peer urls");
    // Its identity is untouched: the member list is the same and the others still serve.
    expect((await client.memberList()).members.map((m) => m.id).sort()).toEqual(
      before.map((m) => m.id).sort(),
    );
    const others = new EtcdClient({ endpoints: [specs[0]!.clientURL, specs[1]!.clientURL] });
    expect((await others.put("k", "v")).revision).toBeGreaterThan(0);

    // A member that still has its data restarts with the same flags and serves again.
    procs[1]!.process.kill("SIGKILL");
    await procs[1]!.exited;
    etcd.start(specs[1]!, [specs[1]!], "existing");
    await waitFor("m1 healthy on its data", async () =>
      (await client.health(specs[1]!.clientURL)).healthy ? true : undefined,
    );
    expect(await new EtcdClient({ endpoints: [specs[1]!.clientURL] }).get("k")).toBe("v");
  }, 90_000);

  it("raises NOSPACE at the quota; compact, defragment and disarm recover writes", async () => {
    const { specs, client } = await start(1, [`--quota-backend-bytes=${16 * 1024 * 1024}`]);
    const endpoint = specs[0]!.clientURL;
    const value = "x".repeat(512 * 1024);
    let full: unknown;
    for (let i = 0; i < 200 && full === undefined; i++) {
      await client.put("capstan/big", `${i}${value}`).catch((err: unknown) => {
        full = err;
      });
    }
    expect(full).toBeInstanceOf(EtcdError);
    expect((full as EtcdError).message).toContain("database space exceeded");
    const alarms = await client.alarmList();
    expect(alarms.map((a) => a.alarm)).toEqual(["NOSPACE"]);

    // The documented recovery: compact the history, defragment each member, disarm the alarm.
    const status = await client.status(endpoint);
    await client.compact(status.header.revision);
    const compacted = await client.status(endpoint);
    expect(compacted.dbSizeInUse).toBeLessThan(compacted.dbSize / 2);
    await client.defragment(endpoint);
    expect((await client.status(endpoint)).dbSize).toBeLessThan(compacted.dbSize / 2);
    await client.alarmDisarm(alarms[0]!.memberId, "NOSPACE");
    expect(await client.alarmList()).toEqual([]);
    expect((await client.put("capstan/after", "ok")).revision).toBeGreaterThan(0);
  }, 90_000);
});
