// What the operator remembers about monitor statuses it cannot write, so that it never retries them in a loop and
// still tells the user (issue 29 item 8). Two cases:
// - a kind whose CRD has no status subresource (prometheus-operator's CRDs before v0.84, which Helm never upgrades):
//   every PATCH of <kind>/status answers 404 although the object exists. Detected once (the 404, then a GET of the
//   object that finds it), the kind's status is not written again for STATUS_RECHECK_MS, then one write tries again
//   (the CRDs may have been upgraded meanwhile);
// - a binding the API server refuses (422: prometheus-operator's CRD allows only its own group in bindings[].group).
// Either way the verdict becomes an Event on the monitor: once per verdict, and again every REPORT_REPEAT_MS while a
// verdict that needs attention (a refusal, a diagnostic) stands, since the API server drops Events after an hour.
// The verdict reported stands in for the status the monitor does not hold: an object Accepted at its generation stays
// Accepted while later configurations load, as with a written status, so a configuration change does not re-report
// every monitor. Kept by the controller across reconciles, in memory: an operator restart only repeats an Event.
import type { ConfigResourceCondition } from "../api/monitoring-common.ts";

/** How long a kind found without a status subresource is not written to before one write checks again. */
export const STATUS_RECHECK_MS = 30 * 60_000;
/** How often a verdict reported by Event is reported again while it stands (Events expire after 1 h by default). */
export const REPORT_REPEAT_MS = 30 * 60_000;

/** A verdict reported by Event instead of status: its signature, the condition, and when it was last reported (ms). */
interface Report {
  signature: string;
  condition: ConfigResourceCondition;
  at: number;
}

/** A kind found without a status subresource: when first found, and when last checked (ms). */
interface MissingStatus {
  since: number;
  checkedAt: number;
}

export class MonitorStatusMemo {
  private readonly missing = new Map<string, MissingStatus>();
  private readonly reports = new Map<string, Report>();
  /** Servers told (by an Event on the Prometheus) that a kind has no status subresource: "<server>|<kind>". */
  private readonly announced = new Set<string>();

  /** Whether `kind`'s status is known to be unwritable, and it is not yet time to check again. */
  skipStatus(kind: string, now: number): boolean {
    const m = this.missing.get(kind);
    return m !== undefined && now - m.checkedAt < STATUS_RECHECK_MS;
  }

  /** Whether `kind` was found without a status subresource (until a status write of that kind succeeds). */
  statusMissing(kind: string): boolean {
    return this.missing.has(kind);
  }

  /** The kinds found without a status subresource, sorted. */
  missingKinds(): string[] {
    return [...this.missing.keys()].sort();
  }

  /** Records that a PATCH of `kind`'s status found no status subresource. */
  markMissing(kind: string, now: number): void {
    this.missing.set(kind, { since: this.missing.get(kind)?.since ?? now, checkedAt: now });
  }

  /** Records a successful status write of `kind`: its status subresource is there (again). */
  markPresent(kind: string): void {
    if (!this.missing.delete(kind)) return;
    for (const key of [...this.announced]) if (key.endsWith(`|${kind}`)) this.announced.delete(key);
  }

  /**
   * Whether the verdict `signature` of the monitor `key` ("<server>|<monitor uid>") is to be reported now: a new
   * verdict always; the same one again once REPORT_REPEAT_MS passed since it was last reported.
   */
  due(key: string, signature: string, now: number): boolean {
    const r = this.reports.get(key);
    return r === undefined || r.signature !== signature || now - r.at >= REPORT_REPEAT_MS;
  }

  /** Whether `signature` is the verdict last reported for `key` (a repeat, not a new verdict). */
  isRepeat(key: string, signature: string): boolean {
    return this.reports.get(key)?.signature === signature;
  }

  /** Records that the verdict `signature` (`condition`) of `key` was reported (or its report considered) at `now`. */
  reported(key: string, signature: string, condition: ConfigResourceCondition, now: number): void {
    this.reports.set(key, { signature, condition, at: now });
  }

  /** The condition last reported by Event for `key`: what its status would say, had it been written. */
  condition(key: string): ConfigResourceCondition | undefined {
    return this.reports.get(key)?.condition;
  }

  /** Forgets the report of `key` (its status was written). */
  forget(key: string): void {
    this.reports.delete(key);
  }

  /** Keeps only the reports of `server` whose key is in `keep` (monitors it no longer selects, or gone, are dropped). */
  retain(server: string, keep: ReadonlySet<string>): void {
    for (const key of [...this.reports.keys()]) {
      if (key.startsWith(`${server}|`) && !keep.has(key)) this.reports.delete(key);
    }
  }

  /** Forgets everything about `server` (deleted). */
  forgetServer(server: string): void {
    this.retain(server, new Set());
    for (const key of [...this.announced]) if (key.startsWith(`${server}|`)) this.announced.delete(key);
  }

  /** Whether `server` is yet to be told that `kind` has no status subresource; records that it now is. */
  announce(server: string, kind: string): boolean {
    const key = `${server}|${kind}`;
    if (this.announced.has(key)) return false;
    this.announced.add(key);
    return true;
  }

  /** Number of remembered reports (tests). */
  get size(): number {
    return this.reports.size;
  }
}
