// Status conditions (metav1.Condition): set, find and compare them the way apimachinery's meta helpers do.

/** One entry of `status.conditions`, as metav1.Condition defines it. */
export interface Condition {
  /** CamelCase kind of condition, e.g. "Available"; unique within the list. */
  type: string;
  status: "True" | "False" | "Unknown";
  /** CamelCase machine-readable reason for the last transition, e.g. "QuorumLost". */
  reason: string;
  /** Human-readable detail; may be empty. */
  message: string;
  /** RFC 3339 time (seconds precision) the status last changed. */
  lastTransitionTime: string;
  /** The `metadata.generation` the condition was computed from. */
  observedGeneration?: number;
}

/** A condition to set: `lastTransitionTime` is optional (filled in when the status changes). */
export type ConditionInput = Omit<Condition, "lastTransitionTime"> & { lastTransitionTime?: string };

const REASON = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;
const TYPE =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const STATUSES = new Set(["True", "False", "Unknown"]);
const MAX_REASON = 1024;
const MAX_MESSAGE = 32768;
const MAX_TYPE = 316;

/** `date` as RFC 3339 with seconds precision, e.g. "2026-11-29T22:00:00Z" (metav1.Time's wire form). */
function rfc3339(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, "Z");
}

/**
 * Returns a new list with `next` set, like apimachinery's `meta.SetStatusCondition`: an existing condition of
 * the same type is updated in place (order kept), a new one is appended. `lastTransitionTime` changes only when
 * the status changes (to `next.lastTransitionTime` if given, else `now`); reason, message and
 * observedGeneration are always taken from `next`. Throws on a reason, type, status or message the API
 * server would reject.
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  next: ConditionInput,
  now: Date = new Date(),
): Condition[] {
  validateCondition(next);
  const list = conditions ?? [];
  const i = list.findIndex((c) => c.type === next.type);
  const existing = list[i];
  const condition: Condition = {
    type: next.type,
    status: next.status,
    reason: next.reason,
    message: next.message,
    lastTransitionTime:
      existing !== undefined && existing.status === next.status
        ? existing.lastTransitionTime
        : (next.lastTransitionTime ?? rfc3339(now)),
    ...(next.observedGeneration === undefined ? {} : { observedGeneration: next.observedGeneration }),
  };
  if (existing === undefined) return [...list, condition];
  return list.map((c, j) => (j === i ? condition : c));
}

/** The condition of `type`, if present. */
export function findCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/** True when the condition of `type` exists and its status is "True". */
export function isConditionTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return findCondition(conditions, type)?.status === "True";
}

/** Returns a new list without the condition of `type`. */
export function removeCondition(conditions: readonly Condition[] | undefined, type: string): Condition[] {
  return (conditions ?? []).filter((c) => c.type !== type);
}

/**
 * True when both lists hold the same conditions, in any order (every field compared). Use it to skip a status
 * write that would change nothing: a no-op reconcile should make no writes.
 */
export function conditionsEqual(
  a: readonly Condition[] | undefined,
  b: readonly Condition[] | undefined,
): boolean {
  const left = a ?? [];
  const right = b ?? [];
  if (left.length !== right.length) return false;
  return left.every((x) => {
    const y = findCondition(right, x.type);
    return (
      y !== undefined &&
      x.status === y.status &&
      x.reason === y.reason &&
      x.message === y.message &&
      x.lastTransitionTime === y.lastTransitionTime &&
      x.observedGeneration === y.observedGeneration
    );
  });
}

function validateCondition(c: ConditionInput): void {
  if (c.type.length > MAX_TYPE || !TYPE.test(c.type)) {
    throw new Error(
      `condition type "${c.type}" is invalid: use a CamelCase name such as "Available" (optionally prefixed with a domain and "/")`,
    );
  }
  if (!STATUSES.has(c.status)) {
    throw new Error(`condition ${c.type}: status "${c.status}" must be "True", "False" or "Unknown"`);
  }
  if (c.reason.length > MAX_REASON || !REASON.test(c.reason)) {
    throw new Error(
      `condition ${c.type}: reason "${c.reason}" is invalid: it must be CamelCase, start with a letter and match ${REASON.source} (e.g. "QuorumLost")`,
    );
  }
  if (c.message.length > MAX_MESSAGE) {
    throw new Error(
      `condition ${c.type}: message is ${c.message.length} characters long, the API allows at most ${MAX_MESSAGE}`,
    );
  }
  if (
    c.observedGeneration !== undefined &&
    (!Number.isSafeInteger(c.observedGeneration) || c.observedGeneration < 0)
  ) {
    throw new Error(
      `condition ${c.type}: observedGeneration ${c.observedGeneration} must be a non-negative integer`,
    );
  }
}
