// The kit for an operator's own per-object metrics: gauges and counters whose series are labelled with the object
// they describe (object_namespace, object_name, then the metric's own labels), remembered per object, so that one
// forget() drops every series of a deleted object, whatever its other labels.
import { Counter, Gauge, type MetricObjectWithValues, type MetricValue, type Registry } from "prom-client";

/**
 * The object a series describes. A `ReconcileRequest` or an `ObjectKey` fits; `namespace` absent or
 * `""` for a cluster-scoped object (its series carry `object_namespace=""`).
 */
export interface MetricObject {
  readonly namespace?: string | undefined;
  readonly name: string;
}

/** How to declare one per-object metric: `object_namespace` and `object_name` come first, then `labelNames`. */
export interface ObjectMetricConfig<L extends string> {
  /** The family's name, under the operator's prefix (e.g. `capstan_etcd_cluster_members`). */
  name: string;
  /** The family's HELP text. */
  help: string;
  /** The labels beside the object's, in the order they are exposed (none when absent). */
  labelNames?: readonly L[];
}

/** The values of a metric's own labels, by name (every one required). */
export type ObjectLabels<L extends string> = Record<L, string | number>;

/** The arguments after the object: the metric's own labels first when it has any, then `rest`. */
export type WithObjectLabels<L extends string, Rest extends unknown[]> = [L] extends [never]
  ? Rest
  : [labels: ObjectLabels<L>, ...Rest];

/** One series of {@link ObjectGauge.replace}: the metric's own labels and the value. */
export interface ObjectSeries<L extends string> {
  labels: ObjectLabels<L>;
  value: number;
}

/** What {@link ObjectMetrics.forget} needs of each metric it made. */
interface Forgettable {
  forget(object: MetricObject): void;
}

/** The series one metric holds: per object ("namespace\u0000name"), its own labels' values by their key. */
class SeriesBook<L extends string> {
  readonly #metric: Gauge<string> | Counter<string>;
  readonly #labelNames: readonly L[];
  readonly #series = new Map<string, Map<string, ObjectLabels<L>>>();

  constructor(metric: Gauge<string> | Counter<string>, labelNames: readonly L[]) {
    this.#metric = metric;
    this.#labelNames = labelNames;
  }

  /** Remembers the series and returns its full label set, in exposition order. */
  touch(object: MetricObject, own: ObjectLabels<L>): Record<string, string | number> {
    const id = objectId(object);
    const series = this.#series.get(id) ?? new Map<string, ObjectLabels<L>>();
    this.#series.set(id, series);
    series.set(this.key(own), own);
    return this.labels(object, own);
  }

  remove(object: MetricObject, own: ObjectLabels<L>): void {
    const id = objectId(object);
    const series = this.#series.get(id);
    series?.delete(this.key(own));
    if (series?.size === 0) this.#series.delete(id);
    this.#metric.remove(this.labels(object, own));
  }

  forget(object: MetricObject): void {
    const id = objectId(object);
    for (const own of this.#series.get(id)?.values() ?? []) this.#metric.remove(this.labels(object, own));
    this.#series.delete(id);
  }

  /** The own labels of every series of `object` set now. */
  seriesOf(object: MetricObject): ObjectLabels<L>[] {
    return [...(this.#series.get(objectId(object))?.values() ?? [])];
  }

  /** The map key of a series' own labels: their values in labelNames order. */
  key(own: ObjectLabels<L>): string {
    return JSON.stringify(this.#labelNames.map((name) => String(own[name])));
  }

  /** The own labels in a method's arguments after the object (an empty set for a metric without any). */
  own(args: readonly unknown[]): ObjectLabels<L> {
    return (this.#labelNames.length === 0 ? {} : args[0]) as ObjectLabels<L>;
  }

  /** The argument after the own labels (the value), if any. */
  value(args: readonly unknown[]): number | undefined {
    return args[this.#labelNames.length === 0 ? 0 : 1] as number | undefined;
  }

  private labels(object: MetricObject, own: ObjectLabels<L>): Record<string, string | number> {
    const labels: Record<string, string | number> = {
      object_namespace: object.namespace ?? "",
      object_name: object.name,
    };
    for (const name of this.#labelNames) labels[name] = own[name];
    return labels;
  }
}

/** prom-client's options for a family labelled object first. */
function familyOptions<L extends string>(config: ObjectMetricConfig<L>, registry: Registry) {
  return {
    name: config.name,
    help: config.help,
    labelNames: ["object_namespace", "object_name", ...(config.labelNames ?? [])],
    registers: [registry],
  };
}

/**
 * A per-object gauge made by {@link ObjectMetrics.gauge}. Methods take the object first, then the gauge's own
 * labels when it has any: `members.set(cluster, { state: "healthy" }, 3)`, `quorum.set(cluster, 1)`.
 */
export class ObjectGauge<L extends string> {
  readonly #gauge: Gauge<string>;
  readonly #book: SeriesBook<L>;

  /** @internal Made by {@link ObjectMetrics.gauge}. */
  constructor(config: ObjectMetricConfig<L>, registry: Registry) {
    this.#gauge = new Gauge(familyOptions(config, registry));
    this.#book = new SeriesBook(this.#gauge, config.labelNames ?? []);
  }

  /** Sets one series of `object`. */
  set(object: MetricObject, ...args: WithObjectLabels<L, [value: number]>): void {
    this.#gauge.set(this.#book.touch(object, this.#book.own(args)), this.#book.value(args) ?? 0);
  }

  /**
   * Sets exactly these series of `object`, in order, and removes its others (a certificate no longer used, say).
   */
  replace(object: MetricObject, series: Iterable<ObjectSeries<L>>): void {
    const before = this.#book.seriesOf(object);
    const now = new Set<string>();
    for (const s of series) {
      now.add(this.#book.key(s.labels));
      this.#gauge.set(this.#book.touch(object, s.labels), s.value);
    }
    for (const own of before) if (!now.has(this.#book.key(own))) this.#book.remove(object, own);
  }

  /** Removes one series of `object` (one never set is no error). */
  remove(object: MetricObject, ...args: WithObjectLabels<L, []>): void {
    this.#book.remove(object, this.#book.own(args));
  }

  /** Removes every series of `object` in this gauge, whatever its own labels. */
  forget(object: MetricObject): void {
    this.#book.forget(object);
  }

  /** The family's series and values, as prom-client reads them (for tests and in-process checks). */
  get(): Promise<MetricObjectWithValues<MetricValue<string>>> {
    return this.#gauge.get();
  }
}

/**
 * A per-object counter made by {@link ObjectMetrics.counter}: `steps.inc(cluster, { step: "AddLearner" })`;
 * `inc(object, ..., 0)` makes the series exist at 0 (Prometheus' advice for counters whose labels are known).
 */
export class ObjectCounter<L extends string> {
  readonly #counter: Counter<string>;
  readonly #book: SeriesBook<L>;

  /** @internal Made by {@link ObjectMetrics.counter}. */
  constructor(config: ObjectMetricConfig<L>, registry: Registry) {
    this.#counter = new Counter(familyOptions(config, registry));
    this.#book = new SeriesBook(this.#counter, config.labelNames ?? []);
  }

  /** Adds `value` (default 1) to one series of `object`. */
  inc(object: MetricObject, ...args: WithObjectLabels<L, [value?: number]>): void {
    this.#counter.inc(this.#book.touch(object, this.#book.own(args)), this.#book.value(args) ?? 1);
  }

  /** Removes one series of `object` (one never set is no error). */
  remove(object: MetricObject, ...args: WithObjectLabels<L, []>): void {
    this.#book.remove(object, this.#book.own(args));
  }

  /** Removes every series of `object` in this counter, whatever its own labels. */
  forget(object: MetricObject): void {
    this.#book.forget(object);
  }

  /** The family's series and values, as prom-client reads them (for tests and in-process checks). */
  get(): Promise<MetricObjectWithValues<MetricValue<string>>> {
    return this.#counter.get();
  }
}

/**
 * The per-object metrics of one kind of object (an operator's EtcdClusters, say), registered on a registry (the
 * manager's `mgr.metrics.registry`). Every gauge and counter it makes labels its series `object_namespace` and
 * `object_name` first (never `namespace`/`name`, which Prometheus' target labels override), then its own labels,
 * and remembers each series it set, so that {@link forget} drops all of a deleted object's series in one call:
 *
 * ```ts
 * const clusters = new ObjectMetrics(registry);
 * const members = clusters.gauge({ name: "capstan_etcd_cluster_members", help: "...", labelNames: ["state"] });
 * const quorum = clusters.gauge({ name: "capstan_etcd_cluster_quorum", help: "..." });
 * members.set(req, { state: "healthy" }, 3);
 * quorum.set(req, 1);
 * clusters.forget(req); // the object is gone: every series of it, in both, is removed
 * ```
 *
 * Use one per kind of object: forget() removes the series of every object of that namespace and name it made.
 */
export class ObjectMetrics {
  readonly #registry: Registry;
  readonly #metrics: Forgettable[] = [];

  /** Metrics registered on `registry`. */
  constructor(registry: Registry) {
    this.#registry = registry;
  }

  /** A new per-object gauge. */
  gauge<L extends string = never>(config: ObjectMetricConfig<L>): ObjectGauge<L> {
    const gauge = new ObjectGauge(config, this.#registry);
    this.#metrics.push(gauge);
    return gauge;
  }

  /** A new per-object counter. */
  counter<L extends string = never>(config: ObjectMetricConfig<L>): ObjectCounter<L> {
    const counter = new ObjectCounter(config, this.#registry);
    this.#metrics.push(counter);
    return counter;
  }

  /** Removes every series of `object` from every metric made here (the object was deleted). */
  forget(object: MetricObject): void {
    for (const metric of this.#metrics) metric.forget(object);
  }
}

/** The map key of an object. */
function objectId(object: MetricObject): string {
  return `${object.namespace ?? ""}\u0000${object.name}`;
}
