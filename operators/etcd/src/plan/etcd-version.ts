// etcd release versions: parsing, ordering, and which version changes a rolling upgrade may make.

/** A parsed MAJOR.MINOR.PATCH etcd version. */
export interface EtcdVersion {
  major: number;
  minor: number;
  patch: number;
}

/** Parses "3.6.15" (a leading "v" is tolerated, as etcd reports it without); undefined when malformed. */
export function parseEtcdVersion(text: string): EtcdVersion | undefined {
  const m = /^v?(\d+)\.(\d+)\.(\d+)$/.exec(text.trim());
  if (m === null) return undefined;
  return { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]) };
}

/** Negative when a < b, zero when equal, positive when a > b. */
export function compareEtcdVersions(a: EtcdVersion, b: EtcdVersion): number {
  return a.major - b.major || a.minor - b.minor || a.patch - b.patch;
}

/** "3.6.15". */
export function formatEtcdVersion(v: EtcdVersion): string {
  return `${v.major}.${v.minor}.${v.patch}`;
}

/**
 * The lowest 3.5 patch release a cluster may upgrade to 3.6 from. etcd's "Upgrade etcd from v3.5 to v3.6"
 * guide (etcd.io/docs/v3.6/upgrades/upgrade_3_6, as of August 2026) says: "make sure that all of your 3.5
 * members are updated to 3.5.32 or later". 3.5.20 fixed learner promotions not persisted to the v3 store (a
 * 3.6 member then fails with "too many learner member"), 3.5.24-3.5.26 fixed more membership inconsistencies
 * between the v2 and v3 stores ("zombie members" re-appearing after the upgrade; no safe workaround below
 * 3.5.26), and 3.5.32 adds --v2-deprecation=write-only-skip-check and a WAL-aware `etcdutl check v2store`.
 */
export const MIN_35_FOR_36: EtcdVersion = { major: 3, minor: 5, patch: 32 };

/**
 * Why moving a running cluster from `from` to `to` is unsupported, or undefined when it is supported. etcd
 * supports upgrades to the next minor release and any patch change within a minor release; it does not
 * support skipping a minor release, changing the major version, or an online minor downgrade; and 3.5 moves to
 * 3.6 only from {@link MIN_35_FOR_36} or later.
 */
export function unsupportedVersionChange(from: EtcdVersion, to: EtcdVersion): string | undefined {
  const f = formatEtcdVersion(from);
  const t = formatEtcdVersion(to);
  if (from.major !== to.major) return `changing the major version (${f} -> ${t}) is not supported`;
  if (to.minor < from.minor) {
    return `downgrading from ${f} to ${t} is not supported; set version back to a ${from.major}.${from.minor}.x release`;
  }
  if (to.minor > from.minor + 1) {
    return `upgrading from ${f} to ${t} skips a minor release; upgrade to ${from.major}.${from.minor + 1}.x first`;
  }
  if (
    from.major === 3 &&
    from.minor === 5 &&
    to.minor === 6 &&
    compareEtcdVersions(from, MIN_35_FOR_36) < 0
  ) {
    const min = formatEtcdVersion(MIN_35_FOR_36);
    return `upgrading from ${f} to ${t} is not supported by etcd: every 3.5 member must first run ${min} or later (etcd's v3.5 -> v3.6 upgrade guide); set version to ${min} or a later 3.5 release first`;
  }
  return undefined;
}
