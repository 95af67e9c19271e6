// annotatePods: make the kubelet refresh the Secrets and ConfigMaps mounted in some pods now, not at its next
// periodic sync of each pod (about a minute), by setting an annotation whose value names what they should load.

import { Pod } from "../api/kinds.ts";
import type { KubeObject } from "../api/object.ts";
import type { Client } from "../client/client.ts";
import { isNotFound } from "../client/errors.ts";

/** Options of {@link annotatePods}. */
export interface AnnotatePodsOptions {
  /** The field manager the patches are recorded under (the operator's name, e.g. `ctx.fieldManager`). */
  fieldManager?: string | undefined;
}

/**
 * Sets `annotation` to `value` on each pod that does not carry it yet, with a merge patch each, and returns how many
 * it patched. A change of a pod's annotations makes the kubelet sync the pod at once, and with it the Secrets and
 * ConfigMaps mounted in it: an operator that changed a mounted configuration or certificate calls this with its
 * hash or fingerprint, and the pods see the new files within seconds (a reloader then picks them up; nothing is
 * restarted). Idempotent: a pod that already carries the value is not written, so a steady-state reconcile makes
 * no request. Pods being deleted are skipped, and one deleted meanwhile (404) too: the annotation is only a nudge,
 * what the pod loads is the mounted object. An empty `value` does nothing. Stops at the first other error.
 */
export async function annotatePods(
  client: Client,
  pods: Iterable<KubeObject>,
  annotation: string,
  value: string,
  options: AnnotatePodsOptions = {},
): Promise<number> {
  if (value === "") return 0;
  let patched = 0;
  for (const pod of pods) {
    const { name, namespace, deletionTimestamp, annotations } = pod.metadata;
    if (name === undefined || deletionTimestamp !== undefined || annotations?.[annotation] === value)
      continue;
    const patch = { metadata: { annotations: { [annotation]: value } } };
    const opts = options.fieldManager === undefined ? {} : { fieldManager: options.fieldManager };
    try {
      await client.patch(Pod, name, namespace, patch, "merge", opts);
      patched++;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
  return patched;
}
