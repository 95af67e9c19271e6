// Prometheus metrics with controller-runtime's and client-go's names and labels, so existing dashboards work.
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/** What a work queue exposes to the scrape-time gauges (no timers: values are computed when scraped). */
export interface QueueProbe {
  readonly name: string;
  readonly controller: string;
  /** Seconds of work in progress that has not yet been observed by work_duration (sum over processing items). */
  unfinishedWorkSeconds(): number;
  /** Seconds the longest-running item has been processed. */
  longestRunningProcessorSeconds(): number;
  /**
   * Moves what the queue counted since the last call (adds, retries, depth, durations) into the
   * workqueue_* metrics. Called before each scrape of them, so the queue's hot path touches no prom-client code.
   */
  flush?(): void;
}

/** One series of a prom-client Histogram as prom-client keeps it (not part of its typings). */
interface HistogramSeries {
  labels: Record<string, string | number>;
  bucketValues: Record<number, number>;
  sum: number;
  count: number;
}

/**
 * Observations of one histogram series counted in plain arrays (no label hashing, no allocation per
 * observation), added to the prom-client Histogram by {@link flush}. prom-client has no bulk API, so the
 * flush adds to the series object its Histogram keeps; core's metrics tests catch a prom-client change.
 */
export class HistogramBuffer {
  private readonly histogram: Histogram<string>;
  private readonly labels: Record<string, string>;
  private readonly bounds: readonly number[];
  /** Observations per bucket (not cumulative), since the last flush; one past the last bound: +Inf only. */
  private readonly counts: Float64Array;
  private sum = 0;
  private count = 0;

  constructor(histogram: Histogram<string>, labels: Record<string, string>, bounds: readonly number[]) {
    this.histogram = histogram;
    this.labels = labels;
    this.bounds = bounds;
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
    this.count++;
  }

  /** Adds what was observed since the last flush to the histogram. */
  flush(): void {
    if (this.count === 0) return;
    const series = this.series();
    for (let i = 0; i < this.bounds.length; i++) {
      const bound = this.bounds[i]!;
      if (this.counts[i]! > 0)
        series.bucketValues[bound] = (series.bucketValues[bound] ?? 0) + this.counts[i]!;
    }
    series.sum += this.sum;
    series.count += this.count;
    this.counts.fill(0);
    this.sum = 0;
    this.count = 0;
  }

  private series(): HistogramSeries {
    const find = () => {
      const map = (this.histogram as unknown as { hashMap?: Record<string, HistogramSeries> }).hashMap ?? {};
      return Object.values(map).find((s) =>
        Object.entries(this.labels).every(([name, value]) => s.labels?.[name] === value),
      );
    };
    let series = find();
    if (series === undefined) {
      this.histogram.zero(this.labels);
      series = find();
    }
    if (series === undefined || typeof series.bucketValues !== "object" || typeof series.sum !== "number") {
      throw new Error(
        `cannot add to a prom-client histogram (labels ${JSON.stringify(this.labels)}): its internal series layout changed; update HistogramBuffer in packages/core/src/metrics/metrics.ts`,
      );
    }
    return series;
  }
}

const RECONCILE_TIME_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25,
  1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];
/** 1e-8 s .. 1e3 s, x10: client-go's workqueue buckets. */
export const QUEUE_BUCKETS: readonly number[] = Array.from({ length: 12 }, (_, i) => 1e-8 * 10 ** i);
const REST_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0];

/** Every metric family core records, bound to one prom-client registry. */
export class CoreMetrics {
  readonly registry: Registry;

  readonly reconcileTotal: Counter<"controller" | "result">;
  readonly reconcileErrors: Counter<"controller">;
  readonly terminalReconcileErrors: Counter<"controller">;
  readonly reconcilePanics: Counter<"controller">;
  readonly reconcileTimeouts: Counter<"controller">;
  readonly reconcileTime: Histogram<"controller">;
  readonly maxConcurrentReconciles: Gauge<"controller">;
  readonly activeWorkers: Gauge<"controller">;

  readonly workqueueDepth: Gauge<"name" | "controller">;
  readonly workqueueAdds: Counter<"name" | "controller">;
  readonly workqueueQueueDuration: Histogram<"name" | "controller">;
  readonly workqueueWorkDuration: Histogram<"name" | "controller">;
  readonly workqueueUnfinishedWork: Gauge<"name" | "controller">;
  readonly workqueueLongestRunning: Gauge<"name" | "controller">;
  readonly workqueueRetries: Counter<"name" | "controller">;

  readonly leaderElectionMasterStatus: Gauge<"name">;
  readonly leaderElectionSlowpath: Counter<"name">;

  readonly restClientRequests: Counter<"code" | "method" | "host">;
  readonly restClientRequestDuration: Histogram<"verb" | "host">;

  private readonly queues = new Set<QueueProbe>();

  constructor(registry: Registry = new Registry()) {
    this.registry = registry;
    const registers = [registry];
    const queues = this.queues;
    /** Brings every queue's counts into its metrics before one of the workqueue_* families is read. */
    const flushQueues = () => {
      for (const q of queues) q.flush?.();
    };

    this.reconcileTotal = new Counter({
      name: "controller_runtime_reconcile_total",
      help: "Total number of reconciliations per controller",
      labelNames: ["controller", "result"],
      registers,
    });
    this.reconcileErrors = new Counter({
      name: "controller_runtime_reconcile_errors_total",
      help: "Total number of reconciliation errors per controller",
      labelNames: ["controller"],
      registers,
    });
    this.terminalReconcileErrors = new Counter({
      name: "controller_runtime_terminal_reconcile_errors_total",
      help: "Total number of terminal reconciliation errors per controller",
      labelNames: ["controller"],
      registers,
    });
    this.reconcilePanics = new Counter({
      name: "controller_runtime_reconcile_panics_total",
      help: "Total number of reconciliation panics (uncaught exceptions) per controller",
      labelNames: ["controller"],
      registers,
    });
    this.reconcileTimeouts = new Counter({
      name: "controller_runtime_reconcile_timeouts_total",
      help: "Total number of reconciliations that hit the reconcile timeout per controller",
      labelNames: ["controller"],
      registers,
    });
    this.reconcileTime = new Histogram({
      name: "controller_runtime_reconcile_time_seconds",
      help: "Length of time per reconciliation per controller",
      labelNames: ["controller"],
      buckets: RECONCILE_TIME_BUCKETS,
      registers,
    });
    this.maxConcurrentReconciles = new Gauge({
      name: "controller_runtime_max_concurrent_reconciles",
      help: "Maximum number of concurrent reconciles per controller",
      labelNames: ["controller"],
      registers,
    });
    this.activeWorkers = new Gauge({
      name: "controller_runtime_active_workers",
      help: "Number of currently used workers per controller",
      labelNames: ["controller"],
      registers,
    });

    this.workqueueDepth = new Gauge({
      name: "workqueue_depth",
      help: "Current depth of workqueue",
      labelNames: ["name", "controller"],
      registers,
      collect: flushQueues,
    });
    this.workqueueAdds = new Counter({
      name: "workqueue_adds_total",
      help: "Total number of adds handled by workqueue",
      labelNames: ["name", "controller"],
      registers,
      collect: flushQueues,
    });
    this.workqueueQueueDuration = new Histogram({
      name: "workqueue_queue_duration_seconds",
      help: "How long in seconds an item stays in workqueue before being requested",
      labelNames: ["name", "controller"],
      buckets: [...QUEUE_BUCKETS],
      registers,
      collect: flushQueues,
    });
    this.workqueueWorkDuration = new Histogram({
      name: "workqueue_work_duration_seconds",
      help: "How long in seconds processing an item from workqueue takes",
      labelNames: ["name", "controller"],
      buckets: [...QUEUE_BUCKETS],
      registers,
      collect: flushQueues,
    });
    this.workqueueUnfinishedWork = new Gauge({
      name: "workqueue_unfinished_work_seconds",
      help: "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads.",
      labelNames: ["name", "controller"],
      registers,
      collect() {
        for (const q of queues)
          this.set({ name: q.name, controller: q.controller }, q.unfinishedWorkSeconds());
      },
    });
    this.workqueueLongestRunning = new Gauge({
      name: "workqueue_longest_running_processor_seconds",
      help: "How many seconds has the longest running processor for workqueue been running",
      labelNames: ["name", "controller"],
      registers,
      collect() {
        for (const q of queues)
          this.set({ name: q.name, controller: q.controller }, q.longestRunningProcessorSeconds());
      },
    });
    this.workqueueRetries = new Counter({
      name: "workqueue_retries_total",
      help: "Total number of retries handled by workqueue",
      labelNames: ["name", "controller"],
      registers,
      collect: flushQueues,
    });

    this.leaderElectionMasterStatus = new Gauge({
      name: "leader_election_master_status",
      help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease.",
      labelNames: ["name"],
      registers,
    });
    this.leaderElectionSlowpath = new Counter({
      name: "leader_election_slowpath_total",
      help: "Total number of slow path exercised in renewing leader leases. 'name' is the string used to identify the lease.",
      labelNames: ["name"],
      registers,
    });

    this.restClientRequests = new Counter({
      name: "rest_client_requests_total",
      help: "Number of HTTP requests, partitioned by status code, method, and host.",
      labelNames: ["code", "method", "host"],
      registers,
    });
    this.restClientRequestDuration = new Histogram({
      name: "rest_client_request_duration_seconds",
      help: "Request latency in seconds. Broken down by verb, and host.",
      labelNames: ["verb", "host"],
      buckets: REST_BUCKETS,
      registers,
    });
  }

  /** Registers a queue for the scrape-time gauges and flushes; returns the function that unregisters it (after a last flush). */
  trackQueue(probe: QueueProbe): () => void {
    this.queues.add(probe);
    return () => {
      probe.flush?.();
      this.queues.delete(probe);
      this.workqueueUnfinishedWork.remove({ name: probe.name, controller: probe.controller });
      this.workqueueLongestRunning.remove({ name: probe.name, controller: probe.controller });
    };
  }

  /** Adds Node.js process metrics (process_*, nodejs_*) to this registry. Call once per registry. */
  collectProcessMetrics(): void {
    collectDefaultMetrics({ register: this.registry });
  }
}

let global: CoreMetrics | undefined;

/** The process-wide metrics (like controller-runtime's `metrics.Registry`); used when a component is given none. */
export function globalMetrics(): CoreMetrics {
  global ??= new CoreMetrics();
  return global;
}
