// The fake API server's storage: objects by collection, the resourceVersion counter, the generation rule,
// deletion with finalizers, paginated lists, and the watch history that watches replay from (compacted like
// etcd, so an old resourceVersion gets 410 Expired) with the open watches it streams to.
import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { KubeObject } from "../api/object.ts";
import { compileSelector, type Selector, statusBody, type Target } from "./fake-api-protocol.ts";
import { deepEqual } from "./json-patch.ts";

interface Watcher {
  collection: string;
  namespace: string;
  selector: Selector;
  bookmarks: boolean;
  res: ServerResponse;
}

interface HistoryEvent {
  rv: number;
  collection: string;
  type: "ADDED" | "MODIFIED" | "DELETED";
  object: KubeObject;
  previous: KubeObject | undefined;
}

/** Objects, resourceVersions, watch history and open watches of one fake API server. */
export class ObjectStore {
  /** Stored objects: collection path (e.g. "/api/v1/configmaps") -> "namespace/name" -> object. */
  readonly objects = new Map<string, Map<string, KubeObject>>();
  private rv = 1;
  private readonly watchers = new Set<Watcher>();
  private history: HistoryEvent[] = [];
  private compactedRv = 0;
  private readonly historyLimit: number;

  /** `historyLimit`: watch events kept for replay from an older resourceVersion. */
  constructor(historyLimit: number) {
    this.historyLimit = historyLimit;
  }

  /** The current (latest) resourceVersion. */
  get resourceVersion(): number {
    return this.rv;
  }

  /** Ends every open watch, as the API server does when a watch times out; clients watch again. */
  closeWatches(): void {
    for (const w of this.watchers) w.res.end();
    this.watchers.clear();
  }

  /**
   * Forgets the watch history, as etcd compaction does: a watch from an older resourceVersion gets 410 Expired
   * (and an informer relists). Combine with {@link closeWatches} to make running informers relist.
   */
  compact(): void {
    this.history = [];
    this.compactedRv = this.rv;
  }

  /** Sends a BOOKMARK with the current resourceVersion to every watch that allowed bookmarks. */
  bookmark(): void {
    for (const w of this.watchers) {
      if (w.bookmarks) writeEvent(w.res, { type: "BOOKMARK", object: bookmarkObject(this.rv) });
    }
  }

  /** The objects of a collection, created empty on first use. */
  private store(collection: string): Map<string, KubeObject> {
    let m = this.objects.get(collection);
    if (!m) {
      m = new Map();
      this.objects.set(collection, m);
    }
    return m;
  }

  /** The stored object itself (not a copy), or undefined. */
  find(collection: string, namespace: string, name: string): KubeObject | undefined {
    return this.objects.get(collection)?.get(`${namespace}/${name}`);
  }

  /** Objects of a collection in `namespace` ("" = all) matching the selectors, sorted by key. */
  select(collection: string, namespace: string, query: Record<string, string>): KubeObject[] {
    const selector = compileSelector(query);
    return [...(this.objects.get(collection)?.entries() ?? [])]
      .filter(([, o]) => namespace === "" || o.metadata.namespace === namespace)
      .filter(([, o]) => selector(o))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, o]) => o);
  }

  /**
   * Stores `next` (replacing `existing`): a new resourceVersion, server-set fields kept, generation bumped when
   * anything but metadata and status changed. An object being deleted whose last finalizer is gone is deleted.

   */
  commit(collection: string, next: KubeObject, existing: KubeObject | undefined, dryRun = false): KubeObject {
    const rv = dryRun ? this.rv : ++this.rv;
    const metadata = next.metadata;
    if (existing === undefined) {
      metadata.uid ??= `uid-${randomBytes(6).toString("hex")}`;
      metadata.creationTimestamp ??= new Date().toISOString().replace(/\.\d+Z$/, "Z");
      metadata.generation ??= 1;
    } else {
      const was = existing.metadata;
      if (was.uid !== undefined) metadata.uid = was.uid;
      if (was.creationTimestamp !== undefined) metadata.creationTimestamp = was.creationTimestamp;
      if (was.deletionTimestamp !== undefined) metadata.deletionTimestamp = was.deletionTimestamp;
      metadata.generation = (was.generation ?? 1) + (sameContent(existing, next) ? 0 : 1);
    }
    metadata.resourceVersion = String(rv);
    if (metadata.finalizers?.length === 0) delete metadata.finalizers;
    if (dryRun) return next;
    if (metadata.deletionTimestamp !== undefined && !metadata.finalizers?.length) {
      this.erase(collection, next);
      return next;
    }
    this.store(collection).set(`${metadata.namespace ?? ""}/${metadata.name}`, next);
    this.notify(collection, existing ? "MODIFIED" : "ADDED", next, existing);
    return next;
  }

  /** Deletes an object now (finalizers ignored) and tells the watchers. */
  erase(collection: string, obj: KubeObject): void {
    this.store(collection).delete(`${obj.metadata.namespace ?? ""}/${obj.metadata.name}`);
    const gone = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++this.rv) } };
    this.notify(collection, "DELETED", gone, obj);
  }

  /** Records a change in the history and sends it to the open watches. */
  private notify(
    collection: string,
    type: HistoryEvent["type"],
    object: KubeObject,
    previous?: KubeObject,
  ): void {
    const event: HistoryEvent = { rv: this.rv, collection, type, object: structuredClone(object), previous };
    this.history.push(event);
    if (this.history.length > this.historyLimit) {
      const dropped = this.history.splice(0, this.history.length - this.historyLimit);
      this.compactedRv = dropped.at(-1)?.rv ?? this.compactedRv;
    }
    for (const w of this.watchers) this.send(w, event);
  }

  /** Sends an event to a watcher as that watcher sees it (entering or leaving its selector). */
  private send(w: Watcher, e: HistoryEvent): void {
    if (w.collection !== e.collection) return;
    if (w.namespace !== "" && w.namespace !== e.object.metadata.namespace) return;
    const now = w.selector(e.object);
    const before = e.previous !== undefined && w.selector(e.previous);
    let type: string = e.type;
    if (e.type === "DELETED") {
      if (!before && !now) return;
    } else if (e.type === "MODIFIED") {
      if (now && !before) type = "ADDED";
      else if (!now && before) type = "DELETED";
      else if (!now) return;
    } else if (!now) return;
    writeEvent(w.res, { type, object: e.object });
  }

  /** Deletes, or with finalizers marks as being deleted; returns what the API server answers. */
  delete(collection: string, obj: KubeObject): KubeObject | Record<string, unknown> {
    if (!obj.metadata.finalizers?.length) {
      this.erase(collection, obj);
      return {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Success",
        details: { name: obj.metadata.name },
      };
    }
    if (obj.metadata.deletionTimestamp !== undefined) return obj;
    const marked = structuredClone(obj);
    marked.metadata.deletionTimestamp = new Date().toISOString().replace(/\.\d+Z$/, "Z");
    marked.metadata.deletionGracePeriodSeconds = 0;
    this.rv++;
    marked.metadata.resourceVersion = String(this.rv);
    marked.metadata.generation = (obj.metadata.generation ?? 1) + 1;
    this.store(collection).set(`${obj.metadata.namespace ?? ""}/${obj.metadata.name}`, marked);
    this.notify(collection, "MODIFIED", marked, obj);
    return marked;
  }

  /**
   * An update of the main resource or of the status subresource: the main resource keeps the stored status,
   * the status subresource changes nothing but status (as for kinds with a status subresource).

  /** A page of a list, as the API server answers it (`limit` and `continue` honoured). */
  listAnswer(t: Target, query: Record<string, string>, kindName: string): Record<string, unknown> {
    let items = this.select(t.collection, t.namespace, query);
    const start = query.continue ? Buffer.from(query.continue, "base64url").toString() : undefined;
    if (start !== undefined)
      items = items.filter((o) => `${o.metadata.namespace ?? ""}/${o.metadata.name}` > start);
    const limit = Number(query.limit ?? 0);
    let cont: string | undefined;
    if (limit > 0 && items.length > limit) {
      items = items.slice(0, limit);
      const last = items.at(-1);
      if (last)
        cont = Buffer.from(`${last.metadata.namespace ?? ""}/${last.metadata.name}`).toString("base64url");
    }
    return {
      kind: `${kindName}List`,
      apiVersion: t.apiVersion,
      metadata: { resourceVersion: String(this.rv), ...(cont ? { continue: cont } : {}) },
      items,
    };
  }

  /** Streams a watch: initial events or the history after its resourceVersion, then every change. */
  watch(t: Target, query: Record<string, string>, req: IncomingMessage, res: ServerResponse): void {
    const w: Watcher = {
      collection: t.collection,
      namespace: t.namespace,
      selector: compileSelector(query),
      bookmarks: query.allowWatchBookmarks === "true",
      res,
    };
    res.writeHead(200, { "content-type": "application/json" });
    res.flushHeaders();
    const from = query.resourceVersion ?? "";
    const initial = from === "" || from === "0" || query.sendInitialEvents === "true";
    if (initial) {
      for (const o of this.select(t.collection, t.namespace, query))
        writeEvent(res, { type: "ADDED", object: o });
      if (query.sendInitialEvents === "true") {
        writeEvent(res, {
          type: "BOOKMARK",
          object: bookmarkObject(this.rv, { "k8s.io/initial-events-end": "true" }),
        });
      }
    } else {
      const rv = Number(from);
      if (!Number.isInteger(rv)) {
        writeEvent(res, {
          type: "ERROR",
          object: statusBody(400, "BadRequest", `invalid resource version "${from}"`),
        });
        res.end();
        return;
      }
      if (rv < this.compactedRv) {
        writeEvent(res, {
          type: "ERROR",
          object: statusBody(410, "Expired", `too old resource version: ${rv} (${this.compactedRv})`),
        });
        res.end();
        return;
      }
      for (const e of this.history) if (e.rv > rv) this.send(w, e);
    }
    this.watchers.add(w);
    const timeout = Number(query.timeoutSeconds ?? 0);
    const timer = timeout > 0 ? setTimeout(() => res.end(), timeout * 1000) : undefined;
    timer?.unref();
    const done = () => {
      clearTimeout(timer);
      this.watchers.delete(w);
    };
    req.on("close", done);
    res.on("finish", done);
  }
}

/** Writes one watch event (a JSON line) unless the stream has ended. */
export function writeEvent(res: ServerResponse, event: unknown): void {
  if (!res.destroyed && !res.writableEnded) res.write(`${JSON.stringify(event)}\n`);
}

/** The object of a BOOKMARK event. */
function bookmarkObject(rv: number, annotations?: Record<string, string>): KubeObject {
  return { metadata: { resourceVersion: String(rv), ...(annotations ? { annotations } : {}) } };
}

/** True when only metadata or status differ (generation then stays). */
function sameContent(a: KubeObject, b: KubeObject): boolean {
  const strip = ({ metadata: _m, status: _s, ...rest }: KubeObject & { status?: unknown }) => rest;
  return deepEqual(strip(a), strip(b));
}
