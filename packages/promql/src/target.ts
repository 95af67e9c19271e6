// The Prometheus server a PromQL expression is checked for: its release (MAJOR.MINOR.PATCH) and the
// `--enable-feature` flags it runs with; version comparison.

/**
 * The Prometheus server an expression is meant for. PromQL grows with each release (functions, duration
 * expressions, modifiers) and keeps new parts behind `--enable-feature` flags at first, so whether an expression
 * loads depends on both.
 */
export interface PromqlTarget {
  /** The Prometheus release, MAJOR.MINOR.PATCH without a leading v, e.g. "3.5.0"; from 3.0.0 on. */
  version: string;
  /** The server's `--enable-feature` flags, e.g. `["promql-experimental-functions"]`; default none. */
  features?: readonly string[];
}

/** The newest Prometheus release the tables of this package were checked against. */
export const NEWEST_KNOWN_PROMETHEUS = "3.16.0";
/** The oldest release the tables describe: Prometheus 3.0.0. */
export const OLDEST_KNOWN_PROMETHEUS = "3.0.0";

/** The target when none is given: the newest release the tables know, no feature flags. */
export const DEFAULT_TARGET: PromqlTarget = { version: NEWEST_KNOWN_PROMETHEUS, features: [] };

const VERSION = /^(\d+)\.(\d+)\.(\d+)$/;

/** [major, minor, patch] of `version`; throws a RangeError naming it when it is not MAJOR.MINOR.PATCH. */
export function versionParts(version: string): [number, number, number] {
  const m = VERSION.exec(version);
  if (m === null) {
    throw new RangeError(
      `Prometheus version ${JSON.stringify(version)} is not MAJOR.MINOR.PATCH (e.g. "3.5.0")`,
    );
  }
  return [Number(m[1]), Number(m[2]), Number(m[3])];
}

/** Negative, zero or positive as release `a` is before, the same as or after `b` ("3.16.0" is after "3.6.0"). */
export function compareVersions(a: string, b: string): number {
  const x = versionParts(a);
  const y = versionParts(b);
  for (let i = 0; i < 3; i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** Whether release `version` is `since` or later. */
export const atLeast = (version: string, since: string): boolean => compareVersions(version, since) >= 0;

/**
 * `target` checked: its version parsed (a RangeError when it is not MAJOR.MINOR.PATCH or older than 3.0.0, which
 * the tables do not describe) and its flags as a set.
 */
export function resolveTarget(target: PromqlTarget): { version: string; features: ReadonlySet<string> } {
  versionParts(target.version);
  if (!atLeast(target.version, OLDEST_KNOWN_PROMETHEUS)) {
    throw new RangeError(
      `Prometheus ${target.version}: the PromQL tables start at ${OLDEST_KNOWN_PROMETHEUS} (Prometheus 2 is not described)`,
    );
  }
  return { version: target.version, features: new Set(target.features ?? []) };
}
