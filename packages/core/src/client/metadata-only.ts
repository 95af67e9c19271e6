// Metadata-only kinds: a kind descriptor whose reads (get, list, watch) return PartialObjectMetadata, as
// controller-runtime's metadata client and metadata informers do. An informer of `metadataOnly(Pod)`
// caches each Pod's metadata (labels, owner references, resourceVersion...) without its spec and status.
import type { Kind } from "../api/kinds.ts";
import type { KubeObject } from "../api/object.ts";

/** An object's metadata alone, as the server sends it for `as=PartialObjectMetadata`. */
export interface PartialObjectMetadata extends KubeObject {
  apiVersion?: string;
  /** "PartialObjectMetadata" (apiVersion "meta.k8s.io/v1"). */
  kind?: string;
}

/** Accept header of a metadata-only list; the server falls back to full objects if it cannot. */
export const METADATA_LIST_ACCEPT =
  "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
/** Accept header of a metadata-only get or watch. */
export const METADATA_ACCEPT =
  "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";

const metadataKinds = new WeakSet<Kind>();
const byFullKind = new WeakMap<Kind, Kind<PartialObjectMetadata>>();

/**
 * The metadata-only variant of `kind`: reads return PartialObjectMetadata, and an informer for it keeps only
 * metadata (often a tenth of a Pod's or Secret's memory). Use it for a controller's `owns` or `watches` when
 * the reconciler needs only owner references, labels or annotations. Always returns the same descriptor
 * for the same kind; it is a different cache from the full kind's.
 */
export function metadataOnly<T extends KubeObject>(kind: Kind<T>): Kind<PartialObjectMetadata> {
  if (metadataKinds.has(kind)) return kind as Kind<PartialObjectMetadata>;
  let partial = byFullKind.get(kind);
  if (partial === undefined) {
    partial = Object.freeze({ ...kind }) as Kind<PartialObjectMetadata>;
    metadataKinds.add(partial);
    byFullKind.set(kind, partial);
  }
  return partial;
}

/** Whether `kind` came from {@link metadataOnly}. */
export function isMetadataOnly(kind: Kind): boolean {
  return metadataKinds.has(kind);
}

/**
 * `obj` reduced to its metadata, for a server that answered with full objects (an aggregated API without
 * PartialObjectMetadata support): the cache then still holds metadata only. A partial object is returned as is.
 */
export function toPartialObjectMetadata(obj: KubeObject): PartialObjectMetadata {
  if (obj.kind === "PartialObjectMetadata") return obj;
  return { apiVersion: "meta.k8s.io/v1", kind: "PartialObjectMetadata", metadata: obj.metadata };
}
