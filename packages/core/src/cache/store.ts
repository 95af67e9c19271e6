// The informer's cache: objects by key ("namespace/name"), with secondary indexes kept in step on every change.
import { type KubeObject, keyOf } from "../api/object.ts";

/** Computes the index values of an object, e.g. its namespace or the uids of its owners. */
export type IndexFunc<T> = (obj: T) => string[];

/** Name of the index every informer keeps by `metadata.namespace` ("" for cluster-scoped objects). */
export const NAMESPACE_INDEX = "namespace";
/** Name of the index every informer keeps by the uids in `metadata.ownerReferences`. */
export const OWNER_UID_INDEX = "ownerUid";

/** Index function for {@link NAMESPACE_INDEX}: `[metadata.namespace ?? ""]`. */
export function indexByNamespace(obj: KubeObject): string[] {
  return [obj.metadata.namespace ?? ""];
}

/** Index function for {@link OWNER_UID_INDEX}: the uid of every owner reference. */
export function indexByOwnerUid(obj: KubeObject): string[] {
  return (obj.metadata.ownerReferences ?? []).map((ref) => ref.uid);
}

/**
 * The informer's default transform: removes `metadata.managedFields`, which no controller reads and which
 * often makes up a third of an object's memory. Replaces `obj.metadata` with a copy (`delete` would leave a
 * slower, larger dictionary-mode object behind) and returns `obj` itself.
 */
export function dropManagedFields<T extends KubeObject>(obj: T): T {
  if (obj.metadata.managedFields === undefined) return obj;
  const { managedFields: _, ...metadata } = obj.metadata;
  obj.metadata = metadata;
  return obj;
}

/** Read access to an informer's cache. Objects are shared: treat them as read-only. */
export interface ReadStore<T> {
  /** The object with key "namespace/name" (or "name" when cluster-scoped). */
  get(key: string): T | undefined;
  list(): T[];
  listKeys(): string[];
  /** Objects whose index function returned `value` for index `index`; throws for an unknown index. */
  byIndex(index: string, value: string): T[];
  readonly size: number;
}

/** index name -> index value -> keys of the objects with that value. */
type Indices = Map<string, Map<string, Set<string>>>;

/** A keyed, indexed object cache. Readers use {@link ReadStore}; the informer owns the mutators. */
export class Store<T extends KubeObject> implements ReadStore<T> {
  private items = new Map<string, T>();
  private indices: Indices = new Map();
  private readonly indexers = new Map<string, IndexFunc<T>>();

  constructor(indexers: Record<string, IndexFunc<T>> = {}) {
    for (const [name, fn] of Object.entries(indexers)) this.addIndexer(name, fn);
  }

  /**
   * Adds an index and indexes the objects already stored. Adding the same function under the same name
   * again is a no-op (several controllers may share an informer); a different function is an error.
   */
  addIndexer(name: string, fn: IndexFunc<T>): void {
    const existing = this.indexers.get(name);
    if (existing === fn) return;
    if (existing !== undefined) throw new Error(`store: indexer "${name}" already exists`);
    this.indexers.set(name, fn);
    const index = new Map<string, Set<string>>();
    this.indices.set(name, index);
    for (const [key, obj] of this.items) addToIndex(index, fn(obj), key);
  }

  get size(): number {
    return this.items.size;
  }

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  list(): T[] {
    return [...this.items.values()];
  }

  listKeys(): string[] {
    return [...this.items.keys()];
  }

  byIndex(index: string, value: string): T[] {
    const idx = this.indices.get(index);
    if (idx === undefined) throw new Error(`store: no index named "${index}"`);
    const keys = idx.get(value);
    if (keys === undefined) return [];
    const out: T[] = [];
    for (const key of keys) {
      const obj = this.items.get(key);
      if (obj !== undefined) out.push(obj);
    }
    return out;
  }

  /** Inserts or replaces `obj`; returns the object it replaced. */
  upsert(obj: T): T | undefined {
    const key = keyOf(obj);
    const old = this.items.get(key);
    if (old !== undefined) this.unindex(old, key);
    this.items.set(key, obj);
    for (const [name, fn] of this.indexers) addToIndex(this.indices.get(name)!, fn(obj), key);
    return old;
  }

  /** Removes the object with `key`; returns it. */
  remove(key: string): T | undefined {
    const old = this.items.get(key);
    if (old === undefined) return undefined;
    this.unindex(old, key);
    this.items.delete(key);
    return old;
  }

  /** Replaces the whole content at once (after a list); readers never see a mix of old and new. */
  replace(objs: Iterable<T>): void {
    const items = new Map<string, T>();
    for (const obj of objs) items.set(keyOf(obj), obj);
    const indices: Indices = new Map();
    for (const [name, fn] of this.indexers) {
      const index = new Map<string, Set<string>>();
      for (const [key, obj] of items) addToIndex(index, fn(obj), key);
      indices.set(name, index);
    }
    this.items = items;
    this.indices = indices;
  }

  private unindex(obj: T, key: string): void {
    for (const [name, fn] of this.indexers) {
      const index = this.indices.get(name)!;
      for (const value of fn(obj)) {
        const keys = index.get(value);
        keys?.delete(key);
        if (keys?.size === 0) index.delete(value);
      }
    }
  }
}

function addToIndex(index: Map<string, Set<string>>, values: string[], key: string): void {
  for (const value of values) {
    const keys = index.get(value);
    if (keys === undefined) index.set(value, new Set([key]));
    else keys.add(key);
  }
}
