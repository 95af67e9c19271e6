// The reconciler's read path: objects served from shared informers, never from the API server.
import type { Kind } from "../api/kinds.ts";
import { type LabelSelectorInput, labelSelector } from "../api/labels.ts";
import type { KubeObject } from "../api/object.ts";
import type { Informer } from "./informer.ts";
import type { InformerFactory } from "./informer-factory.ts";

export interface CacheReadOptions {
  /** Stops waiting for the kind's informer to sync (the reconcile's `ctx.signal`). */
  signal?: AbortSignal;
}

export interface CacheListOptions extends CacheReadOptions {
  namespace?: string;
  /**
   * Objects whose labels match: an equality map (`{ app: "web" }`), a selector string
   * (`"app=web,tier in (a,b),!legacy"`) or a metav1.LabelSelector (matchLabels + matchExpressions).
   */
  labels?: LabelSelectorInput;
  /** Objects whose index `name` holds `value` (e.g. { name: "ownerUid", value: uid }). */
  index?: { name: string; value: string };
}

export interface CacheOptions {
  /** Restricts every informer to one namespace (the manager's namespace-scoped mode). */
  namespace?: string;
  /** How long a read waits for a kind's informer to sync before it fails; default 2 min. */
  syncTimeoutMs?: number;
  /** Aborted when the manager stops: reads waiting for a sync then fail at once. */
  signal?: AbortSignal;
}

/** A read failed because the kind's informer has not synced (yet): names the kind, the scope and why. */
export class CacheNotSyncedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CacheNotSyncedError";
  }
}

/**
 * Reads through the manager's informers. A kind read for the first time gets its own informer, started
 * at once; the read waits for it to sync, at most `syncTimeoutMs` and never past the read's signal.
 * Returned objects are copies: mutate them freely.
 */
export class Cache {
  private readonly factory: InformerFactory;
  private readonly options: CacheOptions;
  private readonly boundSignal: AbortSignal | undefined;

  constructor(factory: InformerFactory, options: CacheOptions = {}, boundSignal?: AbortSignal) {
    this.factory = factory;
    this.options = options;
    this.boundSignal = boundSignal;
  }

  /** A view of this cache whose reads also stop waiting when `signal` aborts (a reconcile's ctx.cache). */
  withSignal(signal: AbortSignal): Cache {
    return new Cache(this.factory, this.options, signal);
  }

  /**
   * The object, or undefined when it does not exist. Throws when a namespaced kind is read without a
   * namespace or outside the manager's namespace (an answer of "not found" would read as "deleted").
   */
  async get<T extends KubeObject>(
    kind: Kind<T>,
    name: string,
    namespace?: string,
    options: CacheReadOptions = {},
  ): Promise<T | undefined> {
    if (kind.namespaced) {
      if (!namespace) {
        throw new Error(
          `Cache.get(${kind.kind} "${name}"): ${kind.kind} is namespaced; pass the namespace (the reconcile request's)`,
        );
      }
      this.checkScope(kind, namespace, "get");
    }
    const informer = await this.synced(kind, options.signal);
    const obj = informer.store.get(kind.namespaced ? `${namespace}/${name}` : name);
    return obj === undefined ? undefined : structuredClone(obj);
  }

  async list<T extends KubeObject>(kind: Kind<T>, options: CacheListOptions = {}): Promise<T[]> {
    const { namespace } = options;
    if (namespace !== undefined && kind.namespaced) this.checkScope(kind, namespace, "list");
    const matcher = options.labels === undefined ? undefined : labelSelector(options.labels);
    const informer = await this.synced(kind, options.signal);
    let items: T[];
    if (options.index) items = informer.store.byIndex(options.index.name, options.index.value);
    else if (namespace !== undefined) items = informer.store.byIndex("namespace", namespace);
    else items = informer.store.list();
    const out: T[] = [];
    for (const obj of items) {
      if (namespace !== undefined && (obj.metadata.namespace ?? "") !== namespace) continue;
      if (matcher && !matcher.matches(obj.metadata.labels)) continue;
      out.push(structuredClone(obj));
    }
    return out;
  }

  private checkScope(kind: Kind, namespace: string, verb: string): void {
    const scope = this.options.namespace;
    if (scope !== undefined && namespace !== scope) {
      throw new Error(
        `Cache.${verb}(${kind.kind}) in namespace "${namespace}": the cache only holds namespace "${scope}" (the manager's namespace)`,
      );
    }
  }

  private async synced<T extends KubeObject>(
    kind: Kind<T>,
    signal: AbortSignal | undefined,
  ): Promise<Informer<T>> {
    const scope = this.options.namespace;
    const informer = this.factory.informerFor(kind, scope ? { namespace: scope } : {});
    if (informer.hasSynced()) return informer;
    const timeoutMs = this.options.syncTimeoutMs ?? 120_000;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signals = [timeout, signal, this.boundSignal, this.options.signal].filter(
      (s): s is AbortSignal => s !== undefined,
    );
    if (await informer.waitForSync(AbortSignal.any(signals))) return informer;
    const where = `${kind.apiVersion} ${kind.kind}${scope ? ` in namespace "${scope}"` : " (all namespaces)"}`;
    const lastError = informer.lastError();
    const why = lastError ? `: last list/watch error: ${lastError.message}` : "";
    if (timeout.aborted) {
      throw new CacheNotSyncedError(`cache for ${where} did not sync within ${timeoutMs} ms${why}`);
    }
    const stopping = this.options.signal?.aborted ? " (manager stopping)" : " (read aborted)";
    throw new CacheNotSyncedError(`cache for ${where} is not synced${stopping}${why}`);
  }
}
