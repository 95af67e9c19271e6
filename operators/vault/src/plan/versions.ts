// Vault versions: comparing them, and refusing a downgrade of spec.version (Vault does not support one: a node of
// an older release on data an active node of a newer release has written may refuse to start or misread it). Pure.
import type { ObservedPod, Step } from "./types.ts";

/** Compares MAJOR.MINOR.PATCH (a "+ent" or "-rc1" suffix ignored); a part that is no number compares equal. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split(/[.+-]/).map(Number);
  const pb = b.split(/[.+-]/).map(Number);
  for (let i = 0; i < 3; i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0 && !Number.isNaN(d)) return d;
  }
  return 0;
}

const RELEASE = /^[0-9]+\.[0-9]+\.[0-9]+/;

/**
 * Degraded `DowngradeRefused` when spec.version is older than the version the cluster runs, else undefined.
 *
 * The version the cluster runs is the newer of
 *  - the version the active node answers (/v1/sys/health): data written by an active node of a release may need
 *    that release; and
 *  - status.currentVersion, the lowest version every pod ran when last recorded.
 * A standby alone on a newer release is not: reverting a rolling upgrade that has not reached the active node
 * (the active is upgraded last) is a rollback to what the data was written with, and is allowed.
 */
export function downgradeStep(
  specVersion: string,
  live: ObservedPod[],
  knownVersion: string | undefined,
): Step | undefined {
  if (!RELEASE.test(specVersion)) return undefined;
  const active = live.find(
    (p) => p.vault.reachable && p.vault.initialized && !p.vault.sealed && !p.vault.standby,
  );
  const candidates: { version: string; source: string }[] = [];
  if (active?.vault.reachable === true && RELEASE.test(active.vault.version)) {
    candidates.push({ version: active.vault.version, source: `the active node ${active.name} runs it` });
  }
  if (knownVersion !== undefined && RELEASE.test(knownVersion)) {
    candidates.push({ version: knownVersion, source: "every pod ran it (status.currentVersion)" });
  }
  const running = candidates.sort((a, b) => compareVersions(b.version, a.version))[0];
  if (running === undefined || compareVersions(specVersion, running.version) >= 0) return undefined;
  return {
    type: "Degraded",
    reason: "DowngradeRefused",
    message: `spec.version ${specVersion} is older than ${running.version}, which the cluster runs (${running.source}): Vault does not support downgrades, so no pod is created, restarted or changed to ${specVersion}; set spec.version back to ${running.version} or later (to go back, restore a raft snapshot taken before the upgrade into a new cluster)`,
  };
}
