// Tests for leader election against an in-memory Lease with a resourceVersion, on fake timers and injected clocks.
import { Registry } from "prom-client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ApiError } from "../client/errors.ts";
import { CoreMetrics } from "../metrics/metrics.ts";
import { defaultLeaderIdentity, LeaderElector, type LeaderElectorOptions } from "./leader-election.ts";
import { formatMicroTime, type LeaderElectionRecord, type ResourceLock } from "./lease-lock.ts";

const T0 = Date.parse("2026-11-29T22:00:00Z");
const LEASE = 15_000;
const DEADLINE = 10_000;
const RETRY = 2_000;

/** Ways a candidate's connection to the Lease can break. */
type Fault = "update-500" | "unreachable" | "hang" | "stuck";

/** One Lease held in memory: a record, a version counter bumped on every write, and a log of writes. */
class MemoryLease {
  record: LeaderElectionRecord | undefined;
  version = 0;
  /** Simulated request latency in ms (0: answers on the next microtask). */
  latencyMs = 0;
  readonly writes: { at: number; record: LeaderElectionRecord }[] = [];

  write(record: LeaderElectionRecord): void {
    this.record = { ...record };
    this.version++;
    this.writes.push({ at: Date.now(), record: { ...record } });
  }
}

/** A candidate's view of a MemoryLease; `fault` breaks only this candidate's requests. */
class MemoryLock implements ResourceLock {
  readonly identity: string;
  fault: Fault | undefined;
  /** Times (fake clock) at which a get answered. */
  readonly gets: number[] = [];
  private readonly store: MemoryLease;

  constructor(store: MemoryLease, identity: string) {
    this.store = store;
    this.identity = identity;
  }

  describe(): string {
    return "default/test-lease";
  }

  async get(signal?: AbortSignal): Promise<{ record: LeaderElectionRecord; version: string } | undefined> {
    await this.request("get", signal);
    this.gets.push(Date.now());
    const { record, version } = this.store;
    return record && { record: { ...record }, version: String(version) };
  }

  async create(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void> {
    await this.request("create", signal);
    if (this.store.record) throw new ApiError(409, "AlreadyExists", 'leases "test-lease" already exists');
    this.store.write(record);
  }

  async update(record: LeaderElectionRecord, version: string, signal?: AbortSignal): Promise<void> {
    await this.request("update", signal);
    if (!this.store.record) throw new ApiError(404, "NotFound", 'leases "test-lease" not found');
    if (version !== String(this.store.version)) {
      throw new ApiError(409, "Conflict", "the object has been modified; please apply your changes");
    }
    this.store.write(record);
  }

  private async request(verb: string, signal: AbortSignal | undefined): Promise<void> {
    if (this.fault === "unreachable") throw new ApiError(0, "ECONNREFUSED", "connect ECONNREFUSED");
    if (this.fault === "stuck") return new Promise<void>(() => {}); // never answers, ignores the signal
    if (this.fault === "hang" || this.store.latencyMs > 0) {
      await new Promise<void>((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason);
        const timer = this.fault === "hang" ? undefined : setTimeout(resolve, this.store.latencyMs);
        signal?.addEventListener(
          "abort",
          () => {
            clearTimeout(timer);
            reject(signal.reason);
          },
          { once: true },
        );
      });
    } else {
      await Promise.resolve();
    }
    if (this.fault === "update-500" && verb !== "get") {
      throw new ApiError(500, "InternalError", "etcdserver: request timed out");
    }
  }
}

interface Candidate {
  elector: LeaderElector;
  lock: MemoryLock;
  metrics: CoreMetrics;
  stop: AbortController;
  result: Promise<"stopped" | "lost">;
  /** Settles `result` into `outcome` so tests can look without awaiting. */
  outcome: () => "stopped" | "lost" | undefined;
  startedAt: number[];
  stoppedCalls: number;
  newLeaders: string[];
  leaderSignal: AbortSignal | undefined;
  /** The Lease holder at the moment onStoppedLeading ran. */
  holderWhenStopped: string | undefined;
}

/** Starts a candidate with a fresh metrics registry, no jitter by default, and a clock skewed by `skewMs`. */
function candidate(
  store: MemoryLease,
  identity: string,
  options: Partial<Omit<LeaderElectorOptions, "lock" | "callbacks">> & { skewMs?: number } = {},
): Candidate {
  const { skewMs = 0, ...rest } = options;
  const lock = new MemoryLock(store, identity);
  const metrics = new CoreMetrics(new Registry());
  const stop = new AbortController();
  let outcome: "stopped" | "lost" | undefined;
  const c: Candidate = {
    lock,
    metrics,
    stop,
    startedAt: [],
    stoppedCalls: 0,
    newLeaders: [],
    leaderSignal: undefined,
    holderWhenStopped: undefined,
    outcome: () => outcome,
    elector: new LeaderElector({
      lock,
      metrics,
      random: () => 0,
      now: () => Date.now() + skewMs,
      callbacks: {
        onStartedLeading: (signal) => {
          c.leaderSignal = signal;
          c.startedAt.push(Date.now());
        },
        onStoppedLeading: () => {
          c.stoppedCalls++;
          c.holderWhenStopped = store.record?.holderIdentity;
        },
        onNewLeader: (id) => c.newLeaders.push(id),
      },
      ...rest,
    }),
    result: Promise.resolve("stopped"),
  };
  c.result = c.elector.run(stop.signal);
  void c.result.then((o) => {
    outcome = o;
  });
  return c;
}

/** Advances the fake clock to T0 + `ms`, running due timers and the promise work they cause. */
async function advanceTo(ms: number): Promise<void> {
  await vi.advanceTimersByTimeAsync(T0 + ms - Date.now());
}

async function masterStatus(metrics: CoreMetrics): Promise<number | undefined> {
  return (await metrics.leaderElectionMasterStatus.get()).values[0]?.value;
}

async function slowpath(metrics: CoreMetrics): Promise<number | undefined> {
  return (await metrics.leaderElectionSlowpath.get()).values[0]?.value;
}

/** A repeatable random sequence in [0, 1). */
function seeded(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1664525 + 1013904223) % 2 ** 32;
    return s / 2 ** 32;
  };
}

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
});

afterEach(() => {
  vi.useRealTimers();
});

describe("LeaderElector options", () => {
  const lock = new MemoryLock(new MemoryLease(), "a");
  const metrics = new CoreMetrics(new Registry());

  it.each([
    [{ leaseDurationMs: 10_000, renewDeadlineMs: 10_000 }, /leaseDurationMs \(10000\) must be greater/],
    [{ renewDeadlineMs: 2_400, retryPeriodMs: 2_000 }, /renewDeadlineMs \(2400\) must be greater than 1.2/],
    [{ retryPeriodMs: 0 }, /must be > 0/],
    [{ leaseDurationMs: -1 }, /must be > 0/],
    [{ leaseDurationMs: Number.NaN }, /must be > 0/],
  ])("rejects %o", (bad, message) => {
    expect(() => new LeaderElector({ lock, metrics, ...bad })).toThrow(message);
  });

  it("rejects an empty identity and accepts the defaults and the tightest valid ordering", () => {
    expect(() => new LeaderElector({ lock: new MemoryLock(new MemoryLease(), ""), metrics })).toThrow(
      /identity must not be empty/,
    );
    expect(() => new LeaderElector({ lock, metrics })).not.toThrow();
    expect(
      () =>
        new LeaderElector({
          lock,
          metrics,
          leaseDurationMs: 3_000,
          renewDeadlineMs: 2_401,
          retryPeriodMs: 2_000,
        }),
    ).not.toThrow();
  });

  it("builds identities from the hostname and a fresh UUID", () => {
    const a = defaultLeaderIdentity();
    expect(a).toMatch(/^.+_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(defaultLeaderIdentity()).not.toBe(a);
  });
});

describe("LeaderElector", () => {
  it("acquires a lease nobody has created", async () => {
    const store = new MemoryLease();
    const a = candidate(store, "a");
    await advanceTo(0);

    expect(a.elector.isLeader()).toBe(true);
    expect(a.elector.getLeader()).toBe("a");
    expect(a.startedAt).toEqual([T0]);
    expect(store.record).toEqual({
      holderIdentity: "a",
      leaseDurationSeconds: 15,
      acquireTime: formatMicroTime(T0),
      renewTime: formatMicroTime(T0),
      leaseTransitions: 0,
    });
    a.stop.abort();
    await a.result;
  });

  it("rounds a fractional leaseDuration up to whole seconds in the Lease", async () => {
    const store = new MemoryLease();
    const a = candidate(store, "a", { leaseDurationMs: 1_500, renewDeadlineMs: 1_000, retryPeriodMs: 500 });
    await advanceTo(0);
    expect(store.record?.leaseDurationSeconds).toBe(2);
    a.stop.abort();
    await a.result;
  });

  it("renews every retryPeriod, keeping acquireTime and leaseTransitions", async () => {
    const store = new MemoryLease();
    const a = candidate(store, "a");
    await advanceTo(5 * RETRY);

    const renewals = store.writes.slice(1);
    expect(renewals.map((w) => w.at)).toEqual([1, 2, 3, 4, 5].map((n) => T0 + n * RETRY));
    for (const { at, record } of renewals) {
      expect(record).toEqual({
        holderIdentity: "a",
        leaseDurationSeconds: 15,
        acquireTime: formatMicroTime(T0),
        renewTime: formatMicroTime(at),
        leaseTransitions: 0,
      });
    }
    expect(a.startedAt).toHaveLength(1);
    a.stop.abort();
    await a.result;
  });

  it.each([0, 700])(
    "never lets a second candidate lead while the first renews (second starts at +%i ms)",
    async (offset) => {
      const store = new MemoryLease();
      store.latencyMs = 30; // requests overlap, so reads go stale and writes conflict
      const a = candidate(store, "a", { random: seeded(1) });
      await advanceTo(offset);
      const b = candidate(store, "b", { random: seeded(2) });
      const [first, second] = offset === 0 ? [null, null] : [a, b];

      for (let t = offset + 100; t <= 5 * 60_000; t += 100) {
        await advanceTo(t);
        expect(a.elector.isLeader() && b.elector.isLeader()).toBe(false);
        if (first && t > 1_000) expect(first.elector.isLeader()).toBe(true);
        if (second) expect(second.elector.isLeader()).toBe(false);
      }
      const leaders = [a, b].filter((c) => c.elector.isLeader());
      expect(leaders).toHaveLength(1);
      const holders = new Set(store.writes.map((w) => w.record.holderIdentity));
      expect(holders).toEqual(new Set([leaders[0]!.lock.identity]));
      expect(store.record?.leaseTransitions).toBe(0);
      expect(a.startedAt.length + b.startedAt.length).toBe(1);

      a.stop.abort();
      b.stop.abort();
      await advanceTo(5 * 60_000 + 1_000); // the release takes two requests of 30 ms
      expect(await Promise.all([a.result, b.result])).toEqual(["stopped", "stopped"]);
      expect(store.record?.holderIdentity).toBe("");
      expect(vi.getTimerCount()).toBe(0);
    },
  );

  it.each<Fault>(["update-500", "unreachable", "hang", "stuck"])(
    "gives up leadership when renewals fail (%s) for renewDeadline",
    async (fault) => {
      const store = new MemoryLease();
      const a = candidate(store, "a");
      await advanceTo(RETRY); // acquired at 0, renewed at RETRY
      expect(store.writes).toHaveLength(2);
      a.lock.fault = fault;
      expect(await masterStatus(a.metrics)).toBe(1);

      // Renewals are retried until renewDeadline has passed since the last successful one (at RETRY),
      // not from the start of the failing round (client-go), so leadership ends 2 s earlier.
      const lastRenewal = RETRY;
      await advanceTo(lastRenewal + DEADLINE - 1);
      expect(a.elector.isLeader()).toBe(true);
      expect(a.leaderSignal?.aborted).toBe(false);

      await advanceTo(lastRenewal + DEADLINE);
      expect(a.outcome()).toBe("lost");
      expect(await a.result).toBe("lost");
      // Others may take over LEASE after their last observation (at RETRY at the earliest): we stopped before.
      expect(lastRenewal + DEADLINE).toBeLessThan(RETRY + LEASE);
      expect(a.elector.isLeader()).toBe(false);
      expect(a.leaderSignal?.aborted).toBe(true);
      expect(a.stoppedCalls).toBe(1);
      expect(await masterStatus(a.metrics)).toBe(0);
      expect(store.writes).toHaveLength(2);
      expect(vi.getTimerCount()).toBe(0);
    },
  );

  it.each([
    ["behind", -3_600_000],
    ["ahead", 3_600_000],
  ])(
    "takes over from a killed leader only leaseDuration after its own observation (leader clock an hour %s)",
    async (_, skewMs) => {
      const store = new MemoryLease();
      const a = candidate(store, "a", { skewMs, releaseOnCancel: false });
      await advanceTo(1_000);
      const b = candidate(store, "b");
      await advanceTo(10_500);

      a.stop.abort(); // a kill: no release, the lease just stops being renewed
      expect(await a.result).toBe("stopped");
      const lastRenewal = store.writes.at(-1)!;
      expect(lastRenewal.record.holderIdentity).toBe("a");
      expect(lastRenewal.record.renewTime).toBe(formatMicroTime(lastRenewal.at + skewMs));

      await advanceTo(60_000);
      const observedAt = b.lock.gets.find((t) => t > lastRenewal.at)!;
      expect(b.startedAt).toHaveLength(1);
      const takeover = b.startedAt[0]!;
      expect(takeover).toBeGreaterThan(observedAt + LEASE);
      expect(takeover).toBeLessThanOrEqual(observedAt + LEASE + RETRY);
      expect(store.record).toMatchObject({
        holderIdentity: "b",
        leaseTransitions: 1,
        acquireTime: formatMicroTime(takeover),
      });
      b.stop.abort();
      await b.result;
    },
  );

  it("releases the lease on a graceful stop; the other candidate takes it at its next retry", async () => {
    const store = new MemoryLease();
    const a = candidate(store, "a");
    await advanceTo(1_000);
    const b = candidate(store, "b");
    await advanceTo(10_500);
    const leaderSignal = a.leaderSignal!;

    a.stop.abort();
    expect(await a.result).toBe("stopped");
    const release = store.writes.at(-1)!;
    expect(release.record).toEqual({
      holderIdentity: "",
      leaseDurationSeconds: 1,
      acquireTime: formatMicroTime(release.at),
      renewTime: formatMicroTime(release.at),
      leaseTransitions: 0,
    });
    expect(leaderSignal.aborted).toBe(true);
    expect(a.stoppedCalls).toBe(1);
    expect(a.holderWhenStopped).toBe("");
    expect(a.elector.getLeader()).toBe("");
    expect(await masterStatus(a.metrics)).toBe(0);

    await advanceTo(10_500 + RETRY * (1 + 1.2));
    expect(b.elector.isLeader()).toBe(true);
    expect(b.startedAt[0]).toBeLessThanOrEqual(release.at + RETRY);
    expect(store.record).toMatchObject({ holderIdentity: "b", leaseTransitions: 1 });
    b.stop.abort();
    await b.result;
    expect(vi.getTimerCount()).toBe(0);
  });

  it("reports each new holder through onNewLeader", async () => {
    const store = new MemoryLease();
    const a = candidate(store, "a");
    await advanceTo(1_000);
    const b = candidate(store, "b");
    await advanceTo(5_000);
    expect(a.newLeaders).toEqual(["a"]);
    expect(b.newLeaders).toEqual(["a"]);
    expect(b.elector.getLeader()).toBe("a");

    a.stop.abort();
    await a.result;
    await advanceTo(10_000);
    expect(b.newLeaders).toEqual(["a", "b"]);
    expect(b.elector.getLeader()).toBe("b");
    b.stop.abort();
    await b.result;
  });

  it("stops at once when aborted while waiting to acquire, without onStoppedLeading", async () => {
    const store = new MemoryLease();
    const a = candidate(store, "a");
    await advanceTo(500);
    const b = candidate(store, "b");
    await advanceTo(1_000); // b's next attempt is due at 2 500

    b.stop.abort();
    await vi.advanceTimersByTimeAsync(0);
    expect(b.outcome()).toBe("stopped");
    expect(b.stoppedCalls).toBe(0);
    expect(b.startedAt).toEqual([]);
    expect(store.record?.holderIdentity).toBe("a");
    a.stop.abort();
    await a.result;
    expect(vi.getTimerCount()).toBe(0);
  });

  it("records master_status and slowpath_total per lock name", async () => {
    const store = new MemoryLease();
    const metrics = new CoreMetrics(new Registry());
    const elector = new LeaderElector({ lock: new MemoryLock(store, "a"), metrics, now: () => Date.now() });
    expect(await metrics.leaderElectionMasterStatus.get()).toMatchObject({
      values: [{ labels: { name: "default/test-lease" }, value: 0 }],
    });
    expect(await slowpath(metrics)).toBe(0);

    const stop = new AbortController();
    const result = elector.run(stop.signal);
    await advanceTo(0);
    expect(await masterStatus(metrics)).toBe(1);
    expect(await slowpath(metrics)).toBe(0); // creating the lease is not a renewal

    await advanceTo(3 * RETRY);
    expect(await slowpath(metrics)).toBe(3);
    stop.abort();
    await result;
    expect(await masterStatus(metrics)).toBe(0);
  });

  it("fails its liveness check while leading without a renewal for leaseDuration + tolerance", async () => {
    const store = new MemoryLease();
    let jumpMs = 0; // a clock that runs ahead of the timers, as when the event loop was blocked
    const a = candidate(store, "a", { now: () => Date.now() + jumpMs });
    expect(a.elector.check()).toBe(true); // not leading: healthy
    await advanceTo(RETRY);
    expect(a.elector.isLeader()).toBe(true);
    expect(a.elector.check(5_000)).toBe(true);

    jumpMs = LEASE + 5_000; // exactly at the tolerance: still healthy
    expect(a.elector.check(5_000)).toBe(true);
    jumpMs = LEASE + 5_001;
    expect(() => a.elector.check(5_000)).toThrow(/leading but the lease was last renewed 20 s ago/);
    a.stop.abort();
    await a.result;
    expect(a.elector.check(5_000)).toBe(true); // stopped leading: healthy again
  });
});
