// Lease-based leader election with client-go's semantics: one leader per lock, expiry judged by local clocks only.
import { hostname } from "node:os";
import { isAlreadyExists, isConflict } from "../client/errors.ts";
import { type CoreMetrics, globalMetrics } from "../metrics/metrics.ts";
import { type Logger, silentLogger } from "../util/logger.ts";
import { sleepUntilAborted } from "../util/sleep.ts";
import { formatMicroTime, type LeaderElectionRecord, type ResourceLock } from "./lease-lock.ts";

/** What a {@link LeaderElector} tells its owner. */
export interface LeaderCallbacks {
  /**
   * Called (not awaited) once the lock is acquired. `signal` aborts when leadership ends: stop all
   * leader-only work then. Errors are logged.
   */
  onStartedLeading?(signal: AbortSignal): void | Promise<void>;
  /** Called once after leadership ends (lost or stopped); never when this candidate did not lead. */
  onStoppedLeading?(): void;
  /** Called whenever the observed holder changes, including to ourselves; "" means the lock was released. */
  onNewLeader?(identity: string): void;
}

export interface LeaderElectorOptions {
  lock: ResourceLock;
  /** Label of the leader_election_* metrics; default `lock.describe()`. */
  name?: string;
  /**
   * How long others wait, from their own observation of the last renewal, before taking over; default 15000.
   * The Lease stores whole seconds: a fraction is rounded up, so others never wait less than this.
   */
  leaseDurationMs?: number;
  /** How long the leader keeps retrying a renewal before it gives up leadership; default 10000. */
  renewDeadlineMs?: number;
  /** Interval between attempts to acquire or renew; default 2000. */
  retryPeriodMs?: number;
  /**
   * On a graceful stop, write a record with no holder so a successor need not wait for expiry; default true.
   * A function is asked at that moment (e.g. the manager releases only when no reconcile is still running).
   */
  releaseOnCancel?: boolean | (() => boolean);
  callbacks?: LeaderCallbacks;
  metrics?: CoreMetrics;
  logger?: Logger;
  /** The local clock in epoch ms (default Date.now); also stamps acquireTime and renewTime. */
  now?: () => number;
  /** A number in [0, 1) for jitter; default Math.random. */
  random?: () => number;
}

/** client-go's wait.Jitter factor for acquire retries: each wait is retryPeriod x (1 + [0, 1.2)). */
const JITTER_FACTOR = 1.2;

/** A unique identity for this process: hostname + "_" + a random UUID (as controller-runtime does). */
export function defaultLeaderIdentity(): string {
  return `${hostname()}_${crypto.randomUUID()}`;
}

/**
 * Elects one leader among the processes that contend for the same lock (client-go's LeaderElector).
 *
 * Each attempt reads the lock, then creates or updates it with optimistic concurrency. Another holder's lease
 * counts as expired only when `leaseDurationSeconds` have passed on our clock since we first saw its current
 * record; the remote renewTime is never trusted. The leader renews every retryPeriod and gives up leadership
 * when a renewal has not succeeded within renewDeadline, which expires before others may take over.
 *
 * Metrics: leader_election_master_status{name} is 1 while leading, else 0. leader_election_slowpath_total{name}
 * counts renewals done by reading the lock and then updating it; client-go counts this only after its
 * optimistic update of a cached record fails, but ResourceLock.update does not return the new version, so
 * here every renewal takes that path and the counter counts renewal attempts that reached the update.
 */
export class LeaderElector {
  private readonly lock: ResourceLock;
  private readonly name: string;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly releaseOnCancel: () => boolean;
  private readonly callbacks: LeaderCallbacks;
  private readonly metrics: CoreMetrics;
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly random: () => number;

  /** The record last read or written, and when (local clock) it was first seen. */
  private observed: LeaderElectionRecord | undefined;
  private observedAt = 0;
  /** Local time at the start of the last successful acquire or renewal (the renewTime it wrote). */
  private renewedAt = 0;
  private reportedLeader = "";
  private leading = false;
  private running = false;

  /** Throws unless leaseDuration > renewDeadline > 1.2 x retryPeriod > 0 and the lock has an identity. */
  constructor(options: LeaderElectorOptions) {
    this.lock = options.lock;
    this.leaseDurationMs = options.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = options.retryPeriodMs ?? 2_000;
    const { leaseDurationMs: lease, renewDeadlineMs: deadline, retryPeriodMs: retry } = this;
    const where = `leader election on ${this.lock.describe()}`;
    if (![lease, deadline, retry].every((ms) => Number.isFinite(ms) && ms > 0)) {
      throw new Error(`${where}: leaseDurationMs, renewDeadlineMs and retryPeriodMs must be > 0`);
    }
    if (lease <= deadline) {
      throw new Error(
        `${where}: leaseDurationMs (${lease}) must be greater than renewDeadlineMs (${deadline})`,
      );
    }
    if (deadline <= JITTER_FACTOR * retry) {
      throw new Error(
        `${where}: renewDeadlineMs (${deadline}) must be greater than ${JITTER_FACTOR} x retryPeriodMs (${retry})`,
      );
    }
    if (this.lock.identity === "") throw new Error(`${where}: the lock's identity must not be empty`);
    this.name = options.name ?? this.lock.describe();
    const release = options.releaseOnCancel ?? true;
    this.releaseOnCancel = typeof release === "function" ? release : () => release;
    this.callbacks = options.callbacks ?? {};
    this.metrics = options.metrics ?? globalMetrics();
    this.log = (options.logger ?? silentLogger).child({
      component: "leader-election",
      lock: this.lock.describe(),
      identity: this.lock.identity,
    });
    this.now = options.now ?? (() => Date.now());
    this.random = options.random ?? Math.random;
    this.metrics.leaderElectionMasterStatus.set({ name: this.name }, 0);
    this.metrics.leaderElectionSlowpath.inc({ name: this.name }, 0);
  }

  /**
   * Contends until this candidate leads, then renews until leadership is lost ("lost") or `signal` aborts
   * ("stopped"; with releaseOnCancel the lock is released first). Lock errors are retried, never thrown;
   * it rejects only when this elector is already running.
   */
  async run(signal: AbortSignal): Promise<"stopped" | "lost"> {
    if (this.running) throw new Error(`leader election on ${this.lock.describe()} is already running`);
    this.running = true;
    try {
      if (!(await this.acquire(signal))) return "stopped";
      if (signal.aborted) {
        // Acquired just as we were told to stop: hand the lock back without starting to lead.
        if (this.releaseOnCancel()) await this.release();
        return "stopped";
      }
      const leader = new AbortController();
      this.setLeading(true);
      this.log.info("became leader");
      this.startLeading(leader.signal);

      const outcome = await this.renew(signal);
      this.setLeading(false);
      leader.abort(outcome === "lost" ? new Error("leader election lost") : signal.reason);
      if (outcome === "lost") this.log.error("leader election lost: the lease could not be renewed in time");
      else if (this.releaseOnCancel()) await this.release();
      this.log.info("stopped leading");
      this.callStoppedLeading();
      return outcome;
    } finally {
      this.running = false;
    }
  }

  /** True while this candidate leads (between onStartedLeading and the end of leadership). */
  isLeader(): boolean {
    return this.leading;
  }

  /**
   * A liveness check (client-go's HealthzAdaptor): throws while this candidate believes it leads but has not
   * renewed for longer than leaseDuration + `toleranceMs` (renewals stalled: others may lead by now).
   */
  check(toleranceMs = 10_000): true {
    if (!this.leading) return true;
    const sinceRenewal = this.now() - this.renewedAt;
    if (sinceRenewal > this.leaseDurationMs + toleranceMs) {
      throw new Error(
        `leader election on ${this.lock.describe()}: leading but the lease was last renewed ${Math.round(sinceRenewal / 1000)} s ago (lease ${this.leaseDurationMs / 1000} s)`,
      );
    }
    return true;
  }

  /** The holder identity last observed on the lock; "" if none. */
  getLeader(): string {
    return this.observed?.holderIdentity ?? "";
  }

  /** Tries now, then every retryPeriod with jitter, until acquired (true) or `signal` aborts (false). */
  private async acquire(signal: AbortSignal): Promise<boolean> {
    this.log.info("attempting to acquire leader lease");
    while (!signal.aborted) {
      const acquired = await this.tryAcquireOrRenew(signal);
      this.reportTransition();
      if (acquired) return true;
      await sleepUntilAborted(this.retryPeriodMs * (1 + this.random() * JITTER_FACTOR), signal);
    }
    return false;
  }

  /**
   * Renews every retryPeriod, retrying a failed renewal until renewDeadline has passed since the last
   * successful one (stricter than client-go, which counts renewDeadline from the start of each attempt
   * round): leadership ends at most renewDeadline after the last renewal, well inside the lease.
   */
  private async renew(signal: AbortSignal): Promise<"stopped" | "lost"> {
    for (;;) {
      await sleepUntilAborted(this.retryPeriodMs, signal);
      if (signal.aborted) return "stopped";
      const renewed = await this.renewWithinDeadline(signal);
      if (signal.aborted) return "stopped";
      if (!renewed) return "lost";
    }
  }

  private async renewWithinDeadline(parent: AbortSignal): Promise<boolean> {
    const remainingMs = this.renewedAt + this.renewDeadlineMs - this.now();
    if (remainingMs <= 0) return false;
    const deadline = withDeadline(parent, remainingMs);
    try {
      for (;;) {
        // Raced against the deadline too: a request that ignores its signal must not keep us leading.
        const renewed = await orWhenAborted(this.tryAcquireOrRenew(deadline.signal), deadline.signal, false);
        this.reportTransition();
        if (renewed) return true;
        await sleepUntilAborted(this.retryPeriodMs, deadline.signal);
        if (deadline.signal.aborted) return false;
      }
    } finally {
      deadline.clear();
    }
  }

  /** One attempt, as client-go's tryAcquireOrRenew (without the optimistic fast path). */
  private async tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const now = this.now();
    const identity = this.lock.identity;
    const stamp = formatMicroTime(now);
    const desired: LeaderElectionRecord = {
      holderIdentity: identity,
      leaseDurationSeconds: Math.ceil(this.leaseDurationMs / 1000),
      acquireTime: stamp,
      renewTime: stamp,
      leaseTransitions: 0,
    };
    try {
      const current = await this.lock.get(signal);
      if (current === undefined) {
        await this.lock.create(desired, signal);
        this.setObserved(desired);
        this.renewedAt = now;
        return true;
      }
      const { record, version } = current;
      if (this.observed === undefined || !sameRecord(this.observed, record)) this.setObserved(record);
      const heldByUs = record.holderIdentity === identity;
      const validUntil = this.observedAt + record.leaseDurationSeconds * 1000;
      if (record.holderIdentity !== "" && !heldByUs && validUntil > now) return false;

      const next: LeaderElectionRecord = heldByUs
        ? { ...desired, acquireTime: record.acquireTime, leaseTransitions: record.leaseTransitions }
        : { ...desired, leaseTransitions: record.leaseTransitions + 1 };
      if (heldByUs) this.metrics.leaderElectionSlowpath.inc({ name: this.name });
      await this.lock.update(next, version, signal);
      this.setObserved(next);
      this.renewedAt = now;
      return true;
    } catch (err) {
      if (signal.aborted) this.log.debug({ err }, "lease attempt cut short");
      else if (isConflict(err) || isAlreadyExists(err))
        this.log.debug({ err }, "another candidate wrote first");
      else this.log.warn({ err }, "failed to acquire or renew the lease");
      return false;
    }
  }

  /** Writes a record with no holder (leaseDurationSeconds 1, transitions kept) if we still hold the lock. */
  private async release(): Promise<void> {
    const deadline = withDeadline(undefined, this.renewDeadlineMs);
    await orWhenAborted(this.releaseWithin(deadline.signal), deadline.signal, undefined);
    deadline.clear();
  }

  private async releaseWithin(signal: AbortSignal): Promise<void> {
    try {
      const current = await this.lock.get(signal);
      if (current === undefined || current.record.holderIdentity !== this.lock.identity) return;
      const stamp = formatMicroTime(this.now());
      const released: LeaderElectionRecord = {
        holderIdentity: "",
        leaseDurationSeconds: 1,
        acquireTime: stamp,
        renewTime: stamp,
        leaseTransitions: current.record.leaseTransitions,
      };
      await this.lock.update(released, current.version, signal);
      this.setObserved(released);
      this.log.info("released the lease");
    } catch (err) {
      this.log.warn({ err }, "failed to release the lease; others take over when it expires");
    }
  }

  private setObserved(record: LeaderElectionRecord): void {
    this.observed = record;
    this.observedAt = this.now();
  }

  private setLeading(leading: boolean): void {
    this.leading = leading;
    this.metrics.leaderElectionMasterStatus.set({ name: this.name }, leading ? 1 : 0);
  }

  private reportTransition(): void {
    const holder = this.getLeader();
    if (holder === this.reportedLeader) return;
    this.reportedLeader = holder;
    this.log.info({ leader: holder }, "new leader observed");
    try {
      this.callbacks.onNewLeader?.(holder);
    } catch (err) {
      this.log.error({ err }, "onNewLeader failed");
    }
  }

  private startLeading(signal: AbortSignal): void {
    const start = this.callbacks.onStartedLeading;
    if (start === undefined) return;
    (async () => start(signal))().catch((err: unknown) => this.log.error({ err }, "onStartedLeading failed"));
  }

  private callStoppedLeading(): void {
    try {
      this.callbacks.onStoppedLeading?.();
    } catch (err) {
      this.log.error({ err }, "onStoppedLeading failed");
    }
  }
}

function sameRecord(a: LeaderElectionRecord, b: LeaderElectionRecord): boolean {
  return (
    a.holderIdentity === b.holderIdentity &&
    a.leaseDurationSeconds === b.leaseDurationSeconds &&
    a.acquireTime === b.acquireTime &&
    a.renewTime === b.renewTime &&
    a.leaseTransitions === b.leaseTransitions
  );
}

/** `promise`'s value, or `fallback` as soon as `signal` aborts (the promise is left to settle on its own). */
function orWhenAborted<T, F>(promise: Promise<T>, signal: AbortSignal, fallback: F): Promise<T | F> {
  if (signal.aborted) return Promise.resolve(fallback);
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(fallback);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(err);
      },
    );
  });
}

/** A signal that aborts when `parent` does or after `ms`; call clear() when done so no timer is left behind. */
function withDeadline(parent: AbortSignal | undefined, ms: number): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const onParentAbort = () => controller.abort(parent?.reason);
  const timer = setTimeout(() => controller.abort(new Error(`deadline of ${ms} ms exceeded`)), ms);
  if (parent?.aborted) onParentAbort();
  else parent?.addEventListener("abort", onParentAbort, { once: true });
  return {
    signal: controller.signal,
    clear() {
      clearTimeout(timer);
      parent?.removeEventListener("abort", onParentAbort);
    },
  };
}
