// The reconciler's read path: objects served from shared informers, never from the API server.

import type { Kind } from "../api/kinds.ts";
import type { KubeObject } from "../api/object.ts";
import { matchesLabels } from "../controller/predicates.ts";
import type { InformerFactory } from "./informer-factory.ts";

export interface CacheListOptions {
  namespace?: string;
  /** Equality selector: every key/value must match. */
  labels?: Record<string, string>;
  /** Objects whose index `name` holds `value` (e.g. { name: "ownerUid", value: uid }). */
  index?: { name: string; value: string };
}

/**
 * Reads through the manager's informers. A kind read for the first time gets its own informer, started
 * at once; the read waits for it to sync. Returned objects are copies: mutate them freely.
 */
export class Cache {
  private readonly factory: InformerFactory;
  private readonly namespace: string | undefined;

  /** `namespace` restricts every informer to one namespace (the manager's namespace-scoped mode). */
  constructor(factory: InformerFactory, namespace?: string) {
    this.factory = factory;
    this.namespace = namespace;
  }

  /** The object, or undefined when it does not exist. */
  async get<T extends KubeObject>(kind: Kind<T>, name: string, namespace?: string): Promise<T | undefined> {
    const informer = await this.synced(kind);
    const key = kind.namespaced ? `${namespace ?? ""}/${name}` : name;
    const obj = informer.store.get(key);
    return obj === undefined ? undefined : structuredClone(obj);
  }

  async list<T extends KubeObject>(kind: Kind<T>, options: CacheListOptions = {}): Promise<T[]> {
    const informer = await this.synced(kind);
    let items: T[];
    if (options.index) items = informer.store.byIndex(options.index.name, options.index.value);
    else if (options.namespace !== undefined) items = informer.store.byIndex("namespace", options.namespace);
    else items = informer.store.list();
    const out: T[] = [];
    for (const obj of items) {
      if (options.namespace !== undefined && (obj.metadata.namespace ?? "") !== options.namespace) continue;
      if (options.labels && !matchesLabels(obj, options.labels)) continue;
      out.push(structuredClone(obj));
    }
    return out;
  }

  private async synced<T extends KubeObject>(kind: Kind<T>) {
    const informer = this.factory.informerFor(kind, this.namespace ? { namespace: this.namespace } : {});
    if (!informer.hasSynced() && !(await informer.waitForSync())) {
      throw new Error(`cache for ${kind.kind} is not synced (manager stopping)`);
    }
    return informer;
  }
}
