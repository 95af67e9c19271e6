// Tests of the etcd client against a real 3-member etcd cluster on 127.0.0.1 (skipped when the binary is missing).
import { freePort, waitFor } from "@capstan/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EtcdClient, EtcdError, memberIdToHex } from "./etcd-client.ts";
import { haveLocalEtcd, LocalEtcd, type LocalMember, localEtcdBinary } from "./local-etcd.ts";

const available = haveLocalEtcd();
if (!available) {
  console.warn(
    `etcd-client tests skipped: ${localEtcdBinary()} is missing; run e2e/cluster/local/build.sh etcd to build it`,
  );
}

/**
 * Runs a membership change, retrying while etcd refuses it as "unhealthy cluster": etcd's strict reconfiguration
 * check rejects member add/remove until every member has been connected for a few seconds (e.g. after a start).
 */
async function reconfigure<T>(change: () => Promise<T>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await change();
    } catch (err) {
      const unhealthy = err instanceof EtcdError && err.message.includes("etcdserver: unhealthy cluster");
      if (!unhealthy || Date.now() > deadline) throw err;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe.skipIf(!available)("EtcdClient against a real etcd cluster", () => {
  let etcd: LocalEtcd;
  let seeds: LocalMember[];
  let client: EtcdClient;

  beforeAll(async () => {
    etcd = await LocalEtcd.create();
    const specs = [await etcd.allocate("m0"), await etcd.allocate("m1"), await etcd.allocate("m2")];
    seeds = specs.map((s) => etcd.start(s, specs, "new"));
    client = new EtcdClient({ endpoints: specs.map((s) => s.clientURL), timeoutMs: 15_000 });
    await Promise.all(
      specs.map((s) =>
        waitFor(
          `${s.name} ready`,
          async () => ((await client.health(s.clientURL)).healthy ? true : undefined),
          100_000, // three etcd processes starting on a loaded 2-core machine
        ),
      ),
    );
  }, 120_000);

  afterAll(async () => {
    await etcd?.stop();
  });

  /** The endpoint whose member is the leader, and the leader's ID. */
  async function leaderOf(endpoints: string[]): Promise<{ endpoint: string; id: string }> {
    return waitFor("a leader", async () => {
      for (const endpoint of endpoints) {
        const s = await client.status(endpoint).catch(() => undefined);
        if (s !== undefined && s.leader !== "0" && s.leader === s.memberId)
          return { endpoint, id: s.memberId };
      }
      return undefined;
    });
  }

  it("lists three voting members with their names and URLs", async () => {
    const { header, members } = await client.memberList();
    expect(header.clusterId).toMatch(/^\d+$/);
    expect(members.map((m) => m.name).sort()).toEqual(["m0", "m1", "m2"]);
    for (const m of members) {
      const seed = seeds.find((s) => s.name === m.name)!;
      expect(m.id).toMatch(/^\d+$/);
      expect(memberIdToHex(m.id)).toMatch(/^[0-9a-f]+$/);
      expect(m.isLearner).toBe(false);
      expect(m.peerURLs).toEqual([seed.peerURL]);
      expect(m.clientURLs).toEqual([seed.clientURL]);
    }
  });

  it("reports every member's status with one leader", async () => {
    const statuses = await Promise.all(seeds.map((s) => client.status(s.clientURL)));
    const ids = (await client.memberList()).members.map((m) => m.id).sort();
    expect(statuses.map((s) => s.memberId).sort()).toEqual(ids);
    const leaders = new Set(statuses.map((s) => s.leader));
    expect(leaders.size).toBe(1);
    expect(ids).toContain([...leaders][0]);
    for (const s of statuses) {
      expect(s.version).toMatch(/^3\.\d+\.\d+$/);
      expect(s.raftIndex).toBeGreaterThan(0);
      expect(s.dbSize).toBeGreaterThan(0);
      expect(s.isLearner).toBe(false);
      expect(s.errors).toEqual([]);
    }
  });

  it("round-trips a key", async () => {
    const { revision } = await client.put("capstan/test/key", "välue ✓");
    expect(revision).toBeGreaterThan(1);
    expect(await client.get("capstan/test/key")).toBe("välue ✓");
    expect(await client.get("capstan/test/missing")).toBeUndefined();
  });

  it("adds a learner, lets it catch up, and promotes it to a voter", async () => {
    const spec = await etcd.allocate("m3");
    const added = await reconfigure(() => client.memberAddAsLearner([spec.peerURL]));
    expect(added).toMatchObject({ name: "", isLearner: true, peerURLs: [spec.peerURL], clientURLs: [] });

    const cluster = [...seeds, spec];
    etcd.start(spec, cluster, "existing");
    const leader = await leaderOf(seeds.map((s) => s.clientURL));
    await waitFor("the learner to catch up", async () => {
      const [learner, lead] = await Promise.all([
        client.status(spec.clientURL),
        client.status(leader.endpoint),
      ]);
      expect(learner.isLearner).toBe(true);
      return learner.raftIndex >= lead.raftIndex ? true : undefined;
    });
    // etcd itself refuses a promotion until the learner is in sync: retry until it accepts.
    await waitFor("the promotion", async () => {
      await client.memberPromote(added.id);
      return true;
    });

    // The member list is answered by whichever member the client reaches, which may not have applied the promotion
    // (or the new member's published name and client URL) yet on a loaded machine: read it until it has.
    const promoted = await waitFor("the promoted member in the member list", async () => {
      const { members } = await client.memberList();
      const m = members.find((x) => x.id === added.id);
      return members.length === 4 && m?.isLearner === false && m.name !== "" ? m : undefined;
    });
    expect(promoted).toMatchObject({ name: "m3", isLearner: false, clientURLs: [spec.clientURL] });
    seeds.push(etcd.members.at(-1)!);
  }, 40_000);

  it("moves leadership to a follower", async () => {
    const endpoints = seeds.map((s) => s.clientURL);
    const before = await leaderOf(endpoints);
    const target = (await client.memberList()).members.find((m) => m.id !== before.id)!;
    // The leader last: the client must find it rather than send the request to the first endpoint.
    const mover = new EtcdClient({
      endpoints: [...endpoints.filter((e) => e !== before.endpoint), before.endpoint],
    });
    await mover.moveLeader(target.id);
    await waitFor("the new leader", async () => {
      const statuses = await Promise.all(endpoints.map((e) => client.status(e)));
      return statuses.every((s) => s.leader === target.id) ? true : undefined;
    });
  });

  it("agrees on hashKV across members at one revision", async () => {
    const { revision } = await client.put("capstan/test/hash", "h");
    const hashes = await Promise.all(
      seeds.map((s) => waitFor(`hashKV of ${s.name}`, () => client.hashKV(s.clientURL, revision))),
    );
    for (const h of hashes) expect(h.hashRevision).toBe(revision);
    expect(new Set(hashes.map((h) => h.memberId)).size).toBe(seeds.length);
    expect(new Set(hashes.map((h) => h.hash)).size).toBe(1);
  });

  it("removes a member, whose process then stops", async () => {
    const leader = await leaderOf(seeds.map((s) => s.clientURL));
    const { members } = await client.memberList();
    const victim = members.find((m) => m.id !== leader.id)!;
    const victimProcess = seeds.find((s) => s.name === victim.name)!;
    // Asked through the other members: a member asked to remove itself may stop before it answers.
    const others = seeds.filter((s) => s !== victimProcess).map((s) => s.clientURL);
    const remover = new EtcdClient({ endpoints: others, timeoutMs: 15_000 });
    await reconfigure(() => remover.memberRemove(victim.id));

    expect((await client.memberList()).members.map((m) => m.id)).not.toContain(victim.id);
    // etcd exits once it learns it was removed; stop it ourselves if it has not by then.
    const exited = await Promise.race([
      victimProcess.exited.then(() => true),
      new Promise<false>((resolve) => setTimeout(() => resolve(false), 10_000)),
    ]);
    if (!exited) victimProcess.process.kill("SIGKILL");
    await victimProcess.exited;
    expect(victimProcess.process.exitCode ?? victimProcess.process.signalCode).not.toBeNull();
    seeds.splice(seeds.indexOf(victimProcess), 1);
    client = remover; // the removed member's endpoint is gone for good
    expect(await client.get("capstan/test/key")).toBe("välue ✓");
  }, 120_000);

  it("names the id and etcd's message when removing an unknown member", async () => {
    const error = await reconfigure(() => client.memberRemove("12345")).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(EtcdError);
    expect((error as EtcdError).message).toMatch(/member remove 12345: etcdserver: member not found/);
    expect((error as EtcdError).message).toContain("http://127.0.0.1:");
    expect((error as EtcdError).etcdMessage).toBe("etcdserver: member not found");
  });

  it("reports etcd's message when adding a peer URL that already exists", async () => {
    const error = await reconfigure(() => client.memberAddAsLearner([seeds[0]!.peerURL])).catch(
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(EtcdError);
    expect((error as EtcdError).message).toContain("etcdserver: Peer URLs already exists");
  });

  it("fails with every endpoint listed when none answers", async () => {
    const endpoints = [`http://127.0.0.1:${await freePort()}`, `http://127.0.0.1:${await freePort()}`];
    const dead = new EtcdClient({ endpoints, timeoutMs: 1_000 });
    const error = await dead.memberList().catch((err: unknown) => err);
    expect(error).toBeInstanceOf(EtcdError);
    expect((error as EtcdError).message).toContain("no etcd endpoint answered");
    for (const e of endpoints) expect((error as EtcdError).message).toContain(e);
    expect((error as EtcdError).endpoints).toEqual(endpoints);
    expect(await dead.health(endpoints[0]!)).toMatchObject({ healthy: false });
  });

  it("stops at once when the caller aborts", async () => {
    const controller = new AbortController();
    controller.abort(new Error("caller gave up"));
    await expect(client.memberList({ signal: controller.signal })).rejects.toThrow("caller gave up");
  });
});
