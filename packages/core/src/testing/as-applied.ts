// asApplied: a desired object as the API server holds it once applyIfChanged applied it, for the "in sync" rows of
// a planner's table test (no server needed).
import type { KubeObject } from "../api/object.ts";
import { APPLIED_HASH_ANNOTATION, desiredHash } from "../client/apply.ts";

/**
 * `desired` as `applyIfChanged` applies it, and so as the API server then holds it: stamped with the hash of what was
 * applied, so `needsApply(desired, asApplied(desired))` is false. A planner test's live object "in sync"; change one
 * of its fields for a drift. (Server defaults and status are not added: a subset check ignores them anyway.)
 */
export function asApplied<T extends KubeObject>(desired: T): T {
  return {
    ...desired,
    metadata: {
      ...desired.metadata,
      annotations: { ...desired.metadata.annotations, [APPLIED_HASH_ANNOTATION]: desiredHash(desired) },
    },
  };
}
