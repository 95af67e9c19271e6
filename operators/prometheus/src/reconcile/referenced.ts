// The Secrets and ConfigMaps monitors reference (bearer tokens, passwords, TLS files), read once per change. The cache
// holds every Secret's and ConfigMap's metadata (metadataOnly informers: no data, so no other team's secrets in memory),
// and an object is read through the client only when its resourceVersion there differs from the one last read. Only
// the keys of objects some server's last reconcile used are kept, and a change of one of them reconciles those servers.
import {
  type Cache,
  type Client,
  ConfigMap,
  isNotFound,
  type Kind,
  type KubeObject,
  metadataOnly,
  type PartialObjectMetadata,
  Secret,
} from "@capstan/core";
import type { KeyRef } from "../desired/select.ts";
import { keyId } from "./observe.ts";

/** The metadata-only kinds whose events say a referenced object changed. */
export const referencedKinds = [metadataOnly(Secret), metadataOnly(ConfigMap)] as const;

interface Known {
  resourceVersion: string;
  /** Key -> value, base64 (a ConfigMap's data encoded as a Secret's is). */
  values: Map<string, string>;
}

/** "Secret/ns/name" or "ConfigMap/ns/name". */
function objectId(kind: string, namespace: string, name: string): string {
  return `${kind}/${namespace}/${name}`;
}

/** What the referenced objects hold, read once per change, and which server read which. */
export class ReferencedObjects {
  readonly #known = new Map<string, Known>();
  readonly #byServer = new Map<string, Set<string>>();
  #reads = 0;

  /** GETs made since start (each a first read or a read after a change). */
  get reads(): number {
    return this.#reads;
  }

  /**
   * The values (base64) of `refs`' keys, by {@link KeyRef} id ("Kind/namespace/name/key"); a missing object or key is
   * absent. Records that server `server` uses these objects (dropping what it used before and no server uses now).
   */
  async readKeys(
    server: string,
    client: Client,
    cache: Cache,
    refs: readonly KeyRef[],
    signal?: AbortSignal,
  ): Promise<Map<string, string>> {
    const objects = new Map<string, Promise<Known | undefined>>();
    for (const ref of refs) {
      const id = objectId(ref.kind, ref.namespace, ref.name);
      if (!objects.has(id)) objects.set(id, this.#read(id, ref, client, cache, signal));
    }
    const out = new Map<string, string>();
    for (const ref of refs) {
      const value = (await objects.get(objectId(ref.kind, ref.namespace, ref.name)))?.values.get(ref.key);
      if (value !== undefined) out.set(keyId(ref), value);
    }
    this.#use(server, new Set(objects.keys()));
    return out;
  }

  /** The server no longer exists (or uses nothing): what only it used is dropped. */
  forget(server: string): void {
    this.#use(server, new Set());
  }

  /** The servers ("namespace/name") whose last reconcile used the object an event of `kind` is about. */
  serversUsing(kind: "Secret" | "ConfigMap", obj: KubeObject): string[] {
    const id = objectId(kind, obj.metadata.namespace ?? "", obj.metadata.name ?? "");
    return [...this.#byServer].filter(([, ids]) => ids.has(id)).map(([server]) => server);
  }

  async #read(
    id: string,
    ref: KeyRef,
    client: Client,
    cache: Cache,
    signal: AbortSignal | undefined,
  ): Promise<Known | undefined> {
    const kind: Kind<KubeObject> = ref.kind === "Secret" ? Secret : ConfigMap;
    const meta: PartialObjectMetadata | undefined = await cache.get(
      metadataOnly(kind),
      ref.name,
      ref.namespace,
      signal === undefined ? {} : { signal },
    );
    if (meta === undefined) {
      this.#known.delete(id);
      return undefined;
    }
    const known = this.#known.get(id);
    if (known !== undefined && known.resourceVersion === meta.metadata.resourceVersion) return known;
    this.#reads += 1;
    const obj = await client.get(kind, ref.name, ref.namespace, signal).catch((err: unknown) => {
      if (isNotFound(err)) return undefined;
      throw err;
    });
    if (obj === undefined) {
      this.#known.delete(id);
      return undefined;
    }
    const fresh: Known = {
      resourceVersion: obj.metadata.resourceVersion ?? "",
      values: valuesOf(ref.kind, obj),
    };
    this.#known.set(id, fresh);
    return fresh;
  }

  #use(server: string, ids: Set<string>): void {
    if (ids.size === 0) this.#byServer.delete(server);
    else this.#byServer.set(server, ids);
    const used = new Set([...this.#byServer.values()].flatMap((s) => [...s]));
    for (const id of this.#known.keys()) if (!used.has(id)) this.#known.delete(id);
  }
}

/** Every key of a Secret or ConfigMap, base64-encoded (the rest of the object is not kept). */
function valuesOf(kind: "Secret" | "ConfigMap", obj: KubeObject): Map<string, string> {
  const b64 = (v: string) => Buffer.from(v).toString("base64");
  const out = new Map<string, string>();
  if (kind === "Secret") {
    const s = obj as { data?: Record<string, string>; stringData?: Record<string, string> };
    for (const [k, v] of Object.entries(s.stringData ?? {})) out.set(k, b64(v));
    for (const [k, v] of Object.entries(s.data ?? {})) out.set(k, v);
  } else {
    const c = obj as { data?: Record<string, string>; binaryData?: Record<string, string> };
    for (const [k, v] of Object.entries(c.data ?? {})) out.set(k, b64(v));
    for (const [k, v] of Object.entries(c.binaryData ?? {})) out.set(k, v);
  }
  return out;
}
