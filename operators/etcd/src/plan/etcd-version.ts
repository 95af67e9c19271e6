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
 * Why moving a running cluster from `from` to `to` is unsupported, or undefined when it is supported. etcd
 * supports upgrades to the next minor release and any patch change within a minor release; it does not
 * support skipping a minor release, changing the major version, or an online minor downgrade.
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
  return undefined;
}
