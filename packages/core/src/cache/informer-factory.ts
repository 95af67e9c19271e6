// Shared informers: one list+watch per kind and scope, however many controllers read it.

import { type Kind, kindId } from "../api/kinds.ts";
import type { KubeObject } from "../api/object.ts";
import type { Client } from "../client/client.ts";
import { isMetadataOnly } from "../client/metadata-only.ts";
import { type Logger, silentLogger } from "../util/logger.ts";
import { Informer, type InformerOptions } from "./informer.ts";
import { clientListerWatcher, type ListerWatcher, type Scope } from "./list-watch.ts";

/** Where a factory's informers get their lists and watches, and the options they share. */
export interface InformerFactoryOptions {
  /** The API server; required unless `listerWatcher` is given. */
  client?: Client;
  /** Makes the ListerWatcher for a kind and scope instead of `client` (for tests). */
  listerWatcher?: <T extends KubeObject>(kind: Kind<T>, scope: Scope) => ListerWatcher<T>;
  logger?: Logger;
  /** Options for every informer. A `transform` here must return the same shape it receives. */
  informerOptions?: Omit<InformerOptions<KubeObject>, "indexers" | "name" | "logger">;
  /** Selectors applied to every informer of a kind whose scope sets none (see {@link CacheSelector}). */
  selectors?: CacheSelector[];
}

/**
 * Restricts what the cache holds of one kind, like controller-runtime's cache `ByObject` selectors: an operator
 * that owns Pods caches only its own (e.g. `app.kubernetes.io/managed-by=my-operator`), not every Pod in the
 * cluster. Objects outside the selector are invisible to the cache and to `owns` event handlers. A selector of
 * `Secret` applies to full Secrets only, one of `metadataOnly(Secret)` to their metadata only (as controller-runtime
 * keys `ByObject` by type): an operator can cache its own Secrets whole and every Secret's metadata.
 */
export interface CacheSelector {
  kind: Kind;
  labelSelector?: string;
  fieldSelector?: string;
}

/**
 * Hands out shared informers: asking twice for the same kind, namespace and selectors returns the same
 * instance, so every controller reads one cache fed by one watch (controller-runtime's cache). For a kind
 * from `metadataOnly(kind)` the informer lists and watches PartialObjectMetadata (metadata only).
 */
export class InformerFactory {
  private readonly options: InformerFactoryOptions;
  private readonly logger: Logger;
  private readonly selectors: Map<string, CacheSelector>;
  private readonly byScope = new Map<string, Informer<KubeObject>>();
  private readonly running: Promise<void>[] = [];
  private signal: AbortSignal | undefined;

  constructor(options: InformerFactoryOptions) {
    if (options.client === undefined && options.listerWatcher === undefined) {
      throw new Error("InformerFactory: pass a client or a listerWatcher");
    }
    this.options = options;
    this.logger = options.logger ?? silentLogger;
    this.selectors = new Map((options.selectors ?? []).map((s) => [selectorKey(s.kind), s]));
  }

  /**
   * The shared informer for `kind` in `scope`; started at once if the factory already runs. A selector the
   * scope leaves unset comes from the kind's {@link CacheSelector}, if any.
   */
  informerFor<T extends KubeObject>(kind: Kind<T>, scope: Scope = {}): Informer<T> {
    const defaults = this.selectors.get(selectorKey(kind));
    const namespace = kind.namespaced ? (scope.namespace ?? "") : "";
    const labelSelector = scope.labelSelector ?? defaults?.labelSelector ?? "";
    const fieldSelector = scope.fieldSelector ?? defaults?.fieldSelector ?? "";
    // A metadataOnly(kind) informer is its own cache, apart from the full kind's.
    const metadata = isMetadataOnly(kind);
    const id = JSON.stringify([kindId(kind), metadata, namespace, labelSelector, fieldSelector]);
    const existing = this.byScope.get(id);
    if (existing !== undefined) return existing as unknown as Informer<T>;

    const normalized: Scope = {
      ...(namespace ? { namespace } : {}),
      ...(labelSelector ? { labelSelector } : {}),
      ...(fieldSelector ? { fieldSelector } : {}),
    };
    const lw = this.options.listerWatcher
      ? this.options.listerWatcher(kind, normalized)
      : clientListerWatcher(this.options.client!, kind, normalized);
    const name = [
      kindId(kind),
      metadata && "metadata-only",
      namespace && `ns=${namespace}`,
      labelSelector && `labels=${labelSelector}`,
      fieldSelector && `fields=${fieldSelector}`,
    ]
      .filter(Boolean)
      .join(" ");
    const shared = this.options.informerOptions as InformerOptions<T> | undefined;
    const custom = shared?.transform;
    const informer = new Informer<T>(lw, {
      ...shared,
      ...(metadata
        ? { transform: (o: T) => dropLastApplied(custom === undefined ? o : custom(o)) as T }
        : {}),
      name,
      logger: this.logger,
    });
    this.byScope.set(id, informer as unknown as Informer<KubeObject>);
    if (this.signal !== undefined) this.run(informer, this.signal);
    return informer;
  }

  /** Starts every informer created so far, and each one created later, until `signal` aborts. */
  start(signal: AbortSignal): void {
    if (this.signal !== undefined) throw new Error("InformerFactory: start() called twice");
    this.signal = signal;
    for (const informer of this.byScope.values()) this.run(informer, signal);
  }

  /** Resolves true once every informer created so far has synced, false if `signal` aborts first. */
  async waitForSync(signal?: AbortSignal): Promise<boolean> {
    const results = await Promise.all(this.informers().map((informer) => informer.waitForSync(signal)));
    return results.every(Boolean);
  }

  /** True when every informer has synced. */
  hasSynced(): boolean {
    return this.informers().every((informer) => informer.hasSynced());
  }

  /** Every informer handed out so far. */
  informers(): Informer<KubeObject>[] {
    return [...this.byScope.values()];
  }

  /** Resolves once every started informer has stopped (after the start signal aborted). */
  async stopped(): Promise<void> {
    await Promise.all(this.running);
  }

  private run<T extends KubeObject>(informer: Informer<T>, signal: AbortSignal): void {
    this.running.push(
      informer.start(signal).catch((err: unknown) => this.logger.error({ err }, "informer failed")),
    );
  }
}

/** The key of a kind's selector: the full kind and its metadataOnly variant are kept apart. */
function selectorKey(kind: Kind): string {
  return isMetadataOnly(kind) ? `${kindId(kind)} metadata-only` : kindId(kind);
}

/** kubectl's copy of the applied object: a Secret's data included. */
const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

/**
 * A metadata-only informer keeps no copy of an object's content: kubectl's last-applied-configuration annotation,
 * which holds the whole object as applied (a Secret's data too), is dropped like managedFields.
 */
function dropLastApplied(obj: KubeObject): KubeObject {
  const annotations = obj.metadata.annotations;
  if (annotations === undefined || !(LAST_APPLIED in annotations)) return obj;
  const { [LAST_APPLIED]: _, ...rest } = annotations;
  obj.metadata = { ...obj.metadata, annotations: rest };
  return obj;
}
