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
import { type Check, ProbeServer } from "./probes.ts";

/** Something the manager runs: started with a signal, resolves after it stopped. */
export interface Runnable {
  start(signal: AbortSignal): Promise<void>;
  /** Default true: runs only on the leader. False: runs on every replica (e.g. a webhook server). */
  needLeaderElection?: boolean;
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
  /** /healthz and /readyz port; default 8081; 0 picks a free port; null disables. May equal metricsPort. */
  healthPort?: number | null;
  /** Listen address for both servers; default 0.0.0.0. */
  bindAddress?: string;
  /** Time in-flight reconciles get after a stop signal; default 30 s. */
  gracefulShutdownTimeoutMs?: number;
  /** Time the caches get to sync before start fails; default 2 min. */
  cacheSyncTimeoutMs?: number;
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
    });
    this.cache = new Cache(this.informers, options.namespace);
    const instance = options.instance ?? process.env.POD_NAME ?? hostname();
    this.recorder = new EventRecorder({
      client: this.client,
      reportingController: `capstan.dev/${options.name}`,
      reportingInstance: instance,
      logger: this.logger,
    });
    this.healthChecks.set("ping", () => true);
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
    const stop = new AbortController();
    const onStop = () => stop.abort(signal.reason);
    if (signal.aborted) onStop();
    else signal.addEventListener("abort", onStop, { once: true });

    const servers = await this.serve();
    const cacheStop = new AbortController();
    this.informers.start(cacheStop.signal);
    let failure: Error | undefined;
    const leaderWork: Promise<void>[] = [];
    const everywhereWork: Promise<void>[] = [];

    try {
      await this.waitForCaches(stop.signal);
      for (const r of this.runnables) {
        if (r.needLeaderElection === false) everywhereWork.push(this.guard(r.start(stop.signal), "runnable"));
      }
      const runLeaderWork = (leaderSignal: AbortSignal) => {
        const deadline = this.options.gracefulShutdownTimeoutMs ?? 30_000;
        for (const c of this.controllers)
          leaderWork.push(this.guard(c.start(leaderSignal, deadline), c.name));
        for (const r of this.runnables) {
          if (r.needLeaderElection !== false) leaderWork.push(this.guard(r.start(leaderSignal), "runnable"));
        }
      };
      if (this.options.leaderElection) {
        const outcome = await this.runElection(
          this.options.leaderElection,
          stop.signal,
          runLeaderWork,
          leaderWork,
        );
        if (outcome === "lost") failure = new Error("leader election lost");
      } else {
        runLeaderWork(stop.signal);
        await new Promise<void>((resolve) => {
          if (stop.signal.aborted) resolve();
          else stop.signal.addEventListener("abort", () => resolve(), { once: true });
        });
        await Promise.all(leaderWork);
      }
    } catch (err) {
      failure = err as Error;
    }

    stop.abort();
    await Promise.all(leaderWork);
    await Promise.all(everywhereWork);
    cacheStop.abort();
    await this.informers.stopped();
    await this.recorder.flush();
    for (const s of servers) await s.close();
    await this.client.close();
    signal.removeEventListener("abort", onStop);
    if (failure) {
      log.error({ err: failure }, "manager stopped with an error");
      throw failure;
    }
    log.info("manager stopped");
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
    if (metricsPort !== null && metricsPort === healthPort && metricsPort !== 0) {
      const s = new ProbeServer({ registry: this.metrics.registry, ...probes });
      const port = await s.listen(metricsPort, host);
      this.ports = { metrics: port, health: port };
      servers.push(s);
    } else {
      if (metricsPort !== null) {
        const s = new ProbeServer({ registry: this.metrics.registry });
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

  private async runElection(
    opts: LeaderElectionOptions,
    signal: AbortSignal,
    runLeaderWork: (leaderSignal: AbortSignal) => void,
    leaderWork: Promise<void>[],
  ): Promise<"stopped" | "lost"> {
    const identity = opts.identity ?? process.env.POD_NAME ?? defaultLeaderIdentity();
    const lock = new LeaseLock({
      client: this.client,
      namespace: opts.namespace,
      name: opts.name ?? `${this.name}-leader`,
      identity,
    });
    this.elector = new LeaderElector({
      lock,
      metrics: this.metrics,
      logger: this.logger,
      ...(opts.leaseDurationMs === undefined ? {} : { leaseDurationMs: opts.leaseDurationMs }),
      ...(opts.renewDeadlineMs === undefined ? {} : { renewDeadlineMs: opts.renewDeadlineMs }),
      ...(opts.retryPeriodMs === undefined ? {} : { retryPeriodMs: opts.retryPeriodMs }),
      releaseOnCancel: true,
      callbacks: {
        onStartedLeading: (leaderSignal) => {
          this.logger.info({ identity }, "became leader; starting controllers");
          // Controllers stop on leadership loss or on the manager's stop signal, whichever comes first.
          runLeaderWork(AbortSignal.any([leaderSignal, signal]));
        },
        onNewLeader: (leader) => this.logger.info({ leader }, "observed leader"),
      },
    });
    // The elector aborts leaderSignal on stop or loss; the lease is released only after the
    // controllers have drained, so a successor never overlaps with our in-flight reconciles.
    const electorStop = new AbortController();
    const electorSignal = electorStop.signal;
    const drainThenRelease = async () => {
      await Promise.all(leaderWork);
      electorStop.abort();
    };
    if (signal.aborted) void drainThenRelease();
    else signal.addEventListener("abort", () => void drainThenRelease(), { once: true });
    return this.elector.run(electorSignal);
  }

  private async guard(p: Promise<void>, what: string): Promise<void> {
    try {
      await p;
    } catch (err) {
      this.logger.error({ err, what }, "runnable failed");
    }
  }
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
