// The manager: one process's cache, client, metrics and probes; leader election; controllers started
// after the caches sync and stopped gracefully (in-flight work finishes, the lease is released).
import { hostname } from "node:os";
import type { KubeObject } from "../api/object.ts";
import { Cache } from "../cache/cache.ts";
import { type CacheSelector, InformerFactory } from "../cache/informer-factory.ts";
import { Client } from "../client/client.ts";
import type { Controller } from "../controller/controller.ts";
import { EventRecorder } from "../helpers/event-recorder.ts";
import { defaultLeaderIdentity, LeaderElector } from "../leader/leader-election.ts";
import { LeaseLock } from "../leader/lease-lock.ts";
import { type CoreMetrics, globalMetrics } from "../metrics/metrics.ts";
import { createLogger, type Logger } from "../util/logger.ts";
import { createMetricsServer, type MetricsServerOptions } from "./metrics-server.ts";
import { type Check, ProbeServer } from "./probes.ts";

/**
 * Something the manager runs: started with a signal, resolves after it stopped. A runnable that rejects
 * (or resolves before it was asked to stop is fine) stops the whole manager with its error.
 */
export interface Runnable {
  start(signal: AbortSignal): Promise<void>;
  /** Default true: runs only on the leader. False: runs on every replica (e.g. a webhook server). */
  needLeaderElection?: boolean;
  /** Names it in logs and errors; default "runnable #n". */
  name?: string;
}

export interface LeaderElectionOptions {
  /** Namespace of the Lease (usually the operator's own). */
  namespace: string;
  /** Lease name; default `${manager name}-leader`. */
  name?: string;
  /** Default hostname_uuid; in a pod, the pod name is a good choice. */
  identity?: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
}

export interface ManagerOptions {
  /** Names the manager in logs, the default Lease and the event reporting controller. */
  name: string;
  client?: Client;
  /** Cache (and so controllers) restricted to one namespace: the namespace-scoped mode. */
  namespace?: string;
  /** Per-kind selectors: the cache holds only matching objects of those kinds (e.g. only the operator's Pods). */
  cacheSelectors?: CacheSelector[];
  /** Off when unset. */
  leaderElection?: LeaderElectionOptions;
  /** /metrics port; default 8080; 0 picks a free port; null disables. */
  metricsPort?: number | null;
  /** /metrics over HTTPS behind API-server authn/authz by default; `{ secure: false }` for plain HTTP. */
  metricsServer?: MetricsServerOptions;
  /** /healthz and /readyz port; default 8081; 0 picks a free port; null disables. May equal metricsPort. */
  healthPort?: number | null;
  /** Listen address for both servers; default 0.0.0.0. */
  bindAddress?: string;
  /**
   * The whole graceful shutdown's bound after a stop signal (controller-runtime's GracefulShutdownTimeout);
   * default 30 s. In-flight reconciles and runnables get it to finish; reconciles' signals abort 5 s before
   * its end (half of it when it is under 10 s) so they can return within it; whatever still runs at its end is
   * named in the error start() rejects with. Set the pod's terminationGracePeriodSeconds above it.
   * Leadership loss gives no grace period: reconciles' signals abort and start() rejects at once, without
   * waiting for anything (the process is expected to exit).
   */
  gracefulShutdownTimeoutMs?: number;
  /** Time the caches get to sync before start fails, and a cache read waits for a kind's sync; default 2 min. */
  cacheSyncTimeoutMs?: number;
  /**
   * Re-delivers every cached object to the controllers about this often (with 10% jitter), like
   * controller-runtime's SyncPeriod. Off by default.
   */
  syncPeriodMs?: number;
  /** /healthz fails while a reconcile has been running longer than this (a stuck worker); default 10 min. */
  stuckReconcileThresholdMs?: number;
  metrics?: CoreMetrics;
  logger?: Logger;
  /** Events' reportingInstance; default the POD_NAME env or the hostname. */
  instance?: string;
}

const processMetricsRegistered = new WeakSet<object>();

/**
 * Runs controllers and runnables. `await mgr.start(signal)` resolves after a graceful shutdown and
 * rejects when the caches cannot sync or leadership is lost (exit non-zero then, as controller-runtime does).
 */
export class Manager {
  readonly name: string;
  readonly client: Client;
  readonly metrics: CoreMetrics;
  readonly logger: Logger;
  readonly informers: InformerFactory;
  readonly cache: Cache;
  readonly recorder: EventRecorder;
  private readonly options: ManagerOptions;
  private readonly controllers: Controller<KubeObject>[] = [];
  private readonly runnables: Runnable[] = [];
  private readonly healthChecks = new Map<string, Check>();
  private readonly readyChecks = new Map<string, Check>();
  private started = false;
  private elector: LeaderElector | undefined;
  private readonly cacheStop = new AbortController();
  private ports: { metrics?: number; health?: number } = {};

  constructor(options: ManagerOptions) {
    this.options = options;
    this.name = options.name;
    this.metrics = options.metrics ?? globalMetrics();
    this.logger = (options.logger ?? createLogger()).child({ manager: options.name });
    this.client =
      options.client ?? new Client({ metrics: this.metrics, userAgent: `${options.name} (capstan)` });
    this.informers = new InformerFactory({
      client: this.client,
      logger: this.logger,
      ...(options.cacheSelectors === undefined ? {} : { selectors: options.cacheSelectors }),
      ...(options.syncPeriodMs === undefined
        ? {}
        : { informerOptions: { resyncPeriodMs: options.syncPeriodMs } }),
    });
    this.cache = new Cache(this.informers, {
      ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
      syncTimeoutMs: options.cacheSyncTimeoutMs ?? 120_000,
      signal: this.cacheStop.signal,
    });
    const instance = options.instance ?? process.env.POD_NAME ?? hostname();
    this.recorder = new EventRecorder({
      client: this.client,
      reportingController: `capstan.dev/${options.name}`,
      reportingInstance: instance,
      logger: this.logger,
    });
    this.healthChecks.set("ping", () => true);
    this.healthChecks.set("leaderElection", () => this.elector?.check() ?? true);
    this.healthChecks.set("workers", () => this.checkWorkers());
    this.readyChecks.set("informers", () => this.informers.hasSynced());
  }

  /** Adds a controller (its informers are created now, so they start with the cache) or a runnable. */
  add(item: Controller<KubeObject> | Runnable): this {
    if (this.started) throw new Error("Manager.add: the manager has already started");
    if ("bind" in item) {
      if (this.controllers.some((c) => c.name === item.name)) {
        throw new Error(`Manager.add: a controller named "${item.name}" is already added`);
      }
      item.bind({
        client: this.client,
        cache: this.cache,
        informers: this.informers,
        recorder: this.recorder,
        metrics: this.metrics,
        logger: this.logger,
        ...(this.options.namespace ? { namespace: this.options.namespace } : {}),
      });
      this.controllers.push(item);
    } else {
      this.runnables.push(item);
    }
    return this;
  }

  addHealthCheck(name: string, check: Check): this {
    this.healthChecks.set(name, check);
    return this;
  }

  addReadyCheck(name: string, check: Check): this {
    this.readyChecks.set(name, check);
    return this;
  }

  /** Bound ports once started (useful with port 0). */
  boundPorts(): { metrics?: number; health?: number } {
    return { ...this.ports };
  }

  /** True while this replica holds the lease (always true without leader election, once started). */
  isLeader(): boolean {
    if (this.options.leaderElection) return this.elector?.isLeader() ?? false;
    return this.started;
  }

  async start(signal: AbortSignal): Promise<void> {
    if (this.started) throw new Error("Manager.start: already started");
    this.started = true;
    const log = this.logger;
    const grace = this.options.gracefulShutdownTimeoutMs ?? 30_000;
    // Aborted by the caller's signal or by the first failure (a runnable or controller that failed).
    const stop = new AbortController();
    let failure: Error | undefined;
    let leadershipLost = false;
    const fail = (err: unknown) => {
      failure ??= err instanceof Error ? err : new Error(String(err));
      stop.abort(failure);
    };
    let stoppedAt = 0;
    stop.signal.addEventListener("abort", () => (stoppedAt = performance.now()), { once: true });
    // The grace period is the whole shutdown's bound (controller-runtime's GracefulShutdownTimeout; the charts'
    // terminationGracePeriodSeconds exceeds it): reconciles' signals abort `slack` before its end, so aborted
    // work has that long to return within it.
    const slack = Math.min(ABORT_SLACK_MS, grace / 2);
    /** What is left of the shutdown period. */
    const remaining = () => Math.max(0, stoppedAt + grace - performance.now());
    const onStop = () => stop.abort(signal.reason);
    if (signal.aborted) onStop();
    else signal.addEventListener("abort", onStop, { once: true });

    const servers = await this.serve();
    this.informers.start(this.cacheStop.signal);
    const work = new Work();
    const leaderWork = new Work();
    const runLeaderWork = (leaderSignal: AbortSignal, lost?: AbortSignal) => {
      for (const c of this.controllers) {
        const started = startSafely(() =>
          c.start(leaderSignal, { gracePeriodMs: grace - slack, ...(lost ? { cancel: lost } : {}) }),
        );
        leaderWork.track(`controller "${c.name}"`, this.guard(started, fail), () => describeInFlight(c));
      }
      // A start() that throws at once fails the manager as a rejected one does (and the others still start).
      this.runnables.forEach((r, i) => {
        if (r.needLeaderElection === false) return;
        leaderWork.track(
          runnableName(r, i),
          this.guard(
            startSafely(() => r.start(leaderSignal)),
            fail,
          ),
        );
      });
    };

    try {
      await this.waitForCaches(stop.signal);
      this.runnables.forEach((r, i) => {
        if (r.needLeaderElection !== false) return;
        work.track(
          runnableName(r, i),
          this.guard(
            startSafely(() => r.start(stop.signal)),
            fail,
          ),
        );
      });
      if (this.options.leaderElection) {
        const outcome = await this.runElection(this.options.leaderElection, stop.signal, runLeaderWork, () =>
          leaderWork.settle(remaining()),
        );
        if (outcome === "lost") {
          leadershipLost = true;
          fail(new Error("leader election lost: stopped at once (no grace period)"));
        }
      } else {
        runLeaderWork(stop.signal);
        await untilAborted(stop.signal);
      }
    } catch (err) {
      fail(err);
    }

    stop.abort();
    if (leadershipLost && failure !== undefined) {
      // controller-runtime returns at once so the process exits: whatever still runs (a reconcile that ignores
      // its signal and talks to its operand directly) ends with it. Nothing is waited for; the rest is let go.
      this.cacheStop.abort();
      for (const s of servers) void s.close();
      signal.removeEventListener("abort", onStop);
      log.error(
        { err: failure, stillRunning: [...leaderWork.pending(), ...work.pending()] },
        "leadership lost",
      );
      throw failure;
    }
    const leaderDrained = await leaderWork.settle(remaining());
    const drained = (await work.settle(remaining())) && leaderDrained;
    this.cacheStop.abort();
    await this.informers.stopped();
    await this.recorder.flush();
    for (const s of servers) await s.close();
    if (drained) await this.client.close(); // with work still running, closing could wait on its requests
    signal.removeEventListener("abort", onStop);
    if (!drained) {
      const pending = [...leaderWork.pending(), ...work.pending()].join("; ");
      const err = new Error(
        `failed waiting for all runnables to end within grace period of ${grace / 1000}s: still running: ${pending}`,
      );
      log.error({ err, cause: failure }, "manager stopped with work still running");
      throw failure ? new AggregateError([failure, err], `${failure.message}; ${err.message}`) : err;
    }
    if (failure) {
      log.error({ err: failure }, "manager stopped with an error");
      throw failure;
    }
    log.info("manager stopped");
  }

  /** /healthz "workers": fails while some reconcile has run longer than stuckReconcileThresholdMs. */
  private checkWorkers(): true {
    const limitMs = this.options.stuckReconcileThresholdMs ?? 600_000;
    for (const c of this.controllers) {
      const longest = c.inFlight()[0];
      if (longest !== undefined && longest.runningMs > limitMs) {
        const { namespace, name } = longest.request;
        throw new Error(
          `controller "${c.name}": reconcile of ${namespace ? `${namespace}/` : ""}${name} has been running for ${Math.round(longest.runningMs / 1000)} s (limit ${limitMs / 1000} s)`,
        );
      }
    }
    return true;
  }

  private async serve(): Promise<ProbeServer[]> {
    const host = this.options.bindAddress ?? "0.0.0.0";
    const metricsPort = this.options.metricsPort === undefined ? 8080 : this.options.metricsPort;
    const healthPort = this.options.healthPort === undefined ? 8081 : this.options.healthPort;
    if (metricsPort !== null && !processMetricsRegistered.has(this.metrics.registry)) {
      this.metrics.collectProcessMetrics();
      processMetricsRegistered.add(this.metrics.registry);
    }
    const servers: ProbeServer[] = [];
    const probes = { healthChecks: this.healthChecks, readyChecks: this.readyChecks };
    // Secure metrics (metrics-server.ts): HTTPS + TokenReview/SubjectAccessReview unless metricsServer.secure is false.
    const metricsServer = (port: number, withProbes?: typeof probes) =>
      createMetricsServer(this.options.metricsServer, {
        registry: this.metrics.registry,
        client: this.client,
        logger: this.logger,
        port,
        ...withProbes,
      });
    if (metricsPort !== null && metricsPort === healthPort && metricsPort !== 0) {
      const s = await metricsServer(metricsPort, probes);
      const port = await s.listen(metricsPort, host);
      this.ports = { metrics: port, health: port };
      servers.push(s);
    } else {
      if (metricsPort !== null) {
        const s = await metricsServer(metricsPort);
        this.ports.metrics = await s.listen(metricsPort, host);
        servers.push(s);
      }
      if (healthPort !== null) {
        const s = new ProbeServer(probes);
        this.ports.health = await s.listen(healthPort, host);
        servers.push(s);
      }
    }
    this.logger.info({ ...this.ports }, "serving metrics and probes");
    return servers;
  }

  private async waitForCaches(signal: AbortSignal): Promise<void> {
    const timeoutMs = this.options.cacheSyncTimeoutMs ?? 120_000;
    const timeout = AbortSignal.timeout(timeoutMs);
    const synced = await this.informers.waitForSync(AbortSignal.any([signal, timeout]));
    if (synced) {
      this.logger.info("caches synced");
      return;
    }
    if (signal.aborted) return;
    const pending = this.informers
      .informers()
      .filter((i) => !i.hasSynced())
      .map((i) => i.name);
    throw new Error(`caches did not sync within ${timeoutMs} ms: ${pending.join(", ")}`);
  }

  /**
   * Contends for the lease and runs the leader work while leading. Leadership lost: the controllers'
   * reconciles are cancelled at once ("lost"). Manager stopped: the leader work drains (bounded by
   * `drain`), then the lease is released, but only when nothing is still running ("stopped").
   */
  private async runElection(
    opts: LeaderElectionOptions,
    signal: AbortSignal,
    runLeaderWork: (leaderSignal: AbortSignal, lost: AbortSignal) => void,
    drain: () => Promise<boolean>,
  ): Promise<"stopped" | "lost"> {
    const identity = opts.identity ?? process.env.POD_NAME ?? defaultLeaderIdentity();
    const lock = new LeaseLock({
      client: this.client,
      namespace: opts.namespace,
      name: opts.name ?? `${this.name}-leader`,
      identity,
    });
    // The elector stops only after the leader work drained, so its leader signal aborting while the
    // elector still runs means one thing: leadership was lost.
    const electorStop = new AbortController();
    let drained = false;
    this.elector = new LeaderElector({
      lock,
      metrics: this.metrics,
      logger: this.logger,
      ...(opts.leaseDurationMs === undefined ? {} : { leaseDurationMs: opts.leaseDurationMs }),
      ...(opts.renewDeadlineMs === undefined ? {} : { renewDeadlineMs: opts.renewDeadlineMs }),
      ...(opts.retryPeriodMs === undefined ? {} : { retryPeriodMs: opts.retryPeriodMs }),
      // A successor must never overlap with a reconcile of ours that is still running.
      releaseOnCancel: () => drained,
      callbacks: {
        onStartedLeading: (leaderSignal) => {
          this.logger.info({ identity }, "became leader; starting controllers");
          const lost = new AbortController();
          leaderSignal.addEventListener(
            "abort",
            () => {
              if (!electorStop.signal.aborted) lost.abort(new Error("leader election lost"));
            },
            { once: true },
          );
          runLeaderWork(AbortSignal.any([leaderSignal, signal]), lost.signal);
        },
        onNewLeader: (leader) => this.logger.info({ leader }, "observed leader"),
      },
    });
    const drainThenRelease = async () => {
      drained = await drain();
      electorStop.abort();
    };
    if (signal.aborted) void drainThenRelease();
    else signal.addEventListener("abort", () => void drainThenRelease(), { once: true });
    return this.elector.run(electorStop.signal);
  }

  /** Resolves when `p` settles; a rejection stops the manager through `fail`. */
  private async guard(p: Promise<void>, fail: (err: unknown) => void): Promise<void> {
    try {
      await p;
    } catch (err) {
      this.logger.error({ err }, "runnable failed: stopping the manager");
      fail(err);
    }
  }
}

/** The last part of the grace period: reconciles' signals abort this long before its end, to return within it. */
const ABORT_SLACK_MS = 5_000;

/** Runs `start`, turning a synchronous throw into a rejected promise. */
function startSafely(start: () => Promise<void>): Promise<void> {
  try {
    return start();
  } catch (err) {
    return Promise.reject(err);
  }
}

/** Running work the manager waits for, each with a name (and details) for the shutdown error. */
class Work {
  private readonly items: { name: string; done: boolean; details?: () => string; promise: Promise<void> }[] =
    [];

  track(name: string, promise: Promise<void>, details?: () => string): void {
    const item = { name, done: false, promise, ...(details ? { details } : {}) };
    promise.then(() => {
      item.done = true;
    });
    this.items.push(item);
  }

  /** True once everything tracked has ended; false if something still runs after `ms`. */
  async settle(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const all = Promise.all(this.items.map((i) => i.promise)).then(() => true);
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    });
    const settled = await Promise.race([all, timeout]);
    clearTimeout(timer);
    return settled;
  }

  pending(): string[] {
    return this.items.filter((i) => !i.done).map((i) => (i.details ? `${i.name} (${i.details()})` : i.name));
  }
}

function runnableName(r: Runnable, i: number): string {
  return r.name ? `runnable "${r.name}"` : `runnable #${i + 1}`;
}

function describeInFlight(c: Controller<KubeObject>): string {
  const running = c.inFlight();
  if (running.length === 0) return "stopping";
  return running
    .map(
      (r) =>
        `reconcile ${r.request.namespace ? `${r.request.namespace}/` : ""}${r.request.name} running ${Math.round(r.runningMs / 1000)} s`,
    )
    .join(", ");
}

function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
}
/**
 * An AbortSignal that aborts on the first SIGTERM or SIGINT; a second signal exits at once with code 1
 * (controller-runtime's SetupSignalHandler).
 */
export function shutdownSignal(): AbortSignal {
  const ac = new AbortController();
  const handler = (sig: NodeJS.Signals) => {
    if (ac.signal.aborted) process.exit(1);
    ac.abort(new Error(`received ${sig}`));
  };
  process.on("SIGTERM", handler);
  process.on("SIGINT", handler);
  return ac.signal;
}
