// The list/watch contract an informer's reflector consumes, and its implementation over the Client.

import type { Kind } from "../api/kinds.ts";
import type { KubeObject } from "../api/object.ts";
import type { Client, ListResult, WatchEvent } from "../client/client.ts";

/** Which objects an informer covers: all of a kind, or one namespace, optionally narrowed by selectors. */
export interface Scope {
  /** Unset or "" for all namespaces (and for cluster-scoped kinds). */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

/** A source of lists and watches, so the reflector can run against a real server or a scripted fake. */
export interface ListerWatcher<T extends KubeObject = KubeObject> {
  /**
   * Whether `watch` honours `sendInitialEvents` (a streaming list, "WatchList"), so the reflector may try
   * it before falling back to a list. Servers that do not support it answer with an error.
   */
  readonly supportsWatchList?: boolean;
  list(options: {
    limit?: number;
    continue?: string;
    resourceVersion?: string;
    signal?: AbortSignal;
    /**
     * The reflector's transform. An implementation may apply it to each item as it decodes the list
     * (then it answers `transformed: true`), so that untransformed objects never pile up.
     */
    transform?: (obj: T) => T;
    /** The transform drops `metadata.managedFields`: an implementation may leave them out when decoding. */
    dropManagedFields?: boolean;
  }): Promise<ListResult<T> & { transformed?: boolean }>;
  watch(options: {
    resourceVersion: string;
    timeoutSeconds: number;
    allowWatchBookmarks: boolean;
    /** Start with ADDED events for every object, then a bookmark marked "k8s.io/initial-events-end". */
    sendInitialEvents?: boolean;
    resourceVersionMatch?: "NotOlderThan";
    signal: AbortSignal;
  }): AsyncIterable<WatchEvent<T>>;
}

/** A ListerWatcher for `kind` within `scope`, backed by the API server. */
export function clientListerWatcher<T extends KubeObject>(
  client: Client,
  kind: Kind<T>,
  scope: Scope = {},
): ListerWatcher<T> {
  const base = {
    ...(scope.namespace ? { namespace: scope.namespace } : {}),
    ...(scope.labelSelector ? { labelSelector: scope.labelSelector } : {}),
    ...(scope.fieldSelector ? { fieldSelector: scope.fieldSelector } : {}),
  };
  return {
    supportsWatchList: true,
    list: async ({ transform, ...options }) => ({
      ...(await client.listPage(kind, {
        ...base,
        ...stripUndefined(options),
        ...(transform ? { transform: transform as unknown as (item: KubeObject) => KubeObject } : {}),
      })),
      transformed: transform !== undefined,
    }),
    watch: (options) => client.watch(kind, { ...base, ...options }),
  };
}

function stripUndefined<T extends object>(o: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as never;
}
