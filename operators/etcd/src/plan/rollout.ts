// Rollout (planNext rules 14, 15 and 17): upgrade members to spec.version and restart those built from an older
// pod template, one at a time, followers first and the leader last after moving leadership; defragment one member
// at a time.
import { quorum } from "@capstan/core";
import {
  compareEtcdVersions,
  type EtcdVersion,
  formatEtcdVersion,
  parseEtcdVersion,
} from "./etcd-version.ts";
import type { Step } from "./types.ts";
import { DEFAULT_DEFRAG_THRESHOLD_PERCENT, DEFRAG_MIN_DB_BYTES, names, type View, wait } from "./view.ts";

/** Rule 14. */
export function upgrade(view: View, target: EtcdVersion): Step | undefined {
  const to = formatEtcdVersion(target);
  const unknown = view.members.filter((m) => m.version === undefined);
  const outdated = view.members.filter((m) => {
    const v = m.version === undefined ? undefined : parseEtcdVersion(m.version);
    return v !== undefined && compareEtcdVersions(v, target) !== 0;
  });
  if (outdated.length === 0) return undefined;
  if (unknown.length > 0) return wait("VersionUnknown", `waiting for ${names(unknown)} to report a version`);
  const next = outdated.find((m) => !m.leader) ?? outdated[0]!;
  if (next.leader) {
    const moved = view.moveLeaderFrom(next, `before upgrading leader ${next.name}`);
    if (moved !== undefined) return moved;
  }
  return {
    type: "UpgradeMember",
    id: next.id,
    name: next.name,
    from: next.version!,
    to,
    message: `upgrading member ${next.name} from ${next.version} to ${to}`,
  };
}

/** Rule 15. */
export function roll(view: View): Step | undefined {
  const outdated = view.members.filter((m) => view.pods.get(m.name)?.outdated === true);
  const next = outdated.find((m) => !m.leader) ?? outdated[0];
  if (next === undefined) return undefined;
  if (next.leader) {
    const moved = view.moveLeaderFrom(next, `before restarting leader ${next.name}`);
    if (moved !== undefined) return moved;
  }
  const step: Step = {
    type: "RestartMember",
    id: next.id,
    name: next.name,
    message: `restarting member ${next.name} on its data to apply the changed podTemplate`,
  };
  // Without a volume the restart replaces the member: it must be safe as a removal.
  if (view.spec.storage.ephemeral === true) return view.removal(next, step);
  const voters = view.members.filter((v) => !v.isLearner);
  if (voters.length === 1) return step; // one member: a short outage is the only way, and the data is kept
  const healthyDuring = voters.filter((v) => view.counts(v) && v !== next).length;
  if (healthyDuring < quorum(voters.length)) {
    return wait(
      "QuorumAtRisk",
      `not restarting ${next.name}: ${healthyDuring} of ${voters.length} voters would stay healthy, below a quorum`,
    );
  }
  return step;
}

/** Rule 17. */
export function defragment(view: View): Step | undefined {
  const percent = view.spec.maintenance?.defragThresholdPercent ?? DEFAULT_DEFRAG_THRESHOLD_PERCENT;
  const fragmented = view.members.filter((m) => {
    if (m.dbSize === undefined || m.dbSizeInUse === undefined || m.dbSize < DEFRAG_MIN_DB_BYTES) return false;
    return ((m.dbSize - m.dbSizeInUse) / m.dbSize) * 100 >= percent;
  });
  const next = fragmented.find((m) => !m.leader) ?? fragmented[0];
  if (next === undefined) return undefined;
  const free = Math.round((((next.dbSize ?? 0) - (next.dbSizeInUse ?? 0)) / (next.dbSize ?? 1)) * 100);
  return {
    type: "Defragment",
    id: next.id,
    name: next.name,
    message: `defragmenting member ${next.name}: ${free}% of its ${next.dbSize} byte database is free pages (threshold ${percent}%)`,
  };
}
