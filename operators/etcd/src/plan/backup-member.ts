// Which member a backup takes its snapshot from: a healthy, started voting member whose raft index is within
// `maxLag` entries of the leader's, preferring a follower (a snapshot streams the whole database and loads the
// member serving it; the leader has the most to lose). Learners and members that are not caught up never serve.
// Pure: it reads the members as the planner observes them.
import type { ObservedMember } from "./plan.ts";

/** A member more than this many raft entries behind the leader is not caught up. */
export const DEFAULT_MAX_BACKUP_LAG = 1000;

/** The chosen member, or why none can serve. */
export type BackupMemberChoice =
  | { ok: true; member: string; leader: boolean; raftIndex: number; version?: string }
  | { ok: false; reason: string };

/** Why `m` cannot serve a snapshot, or undefined when it can. */
function unfit(
  m: ObservedMember,
  leader: ObservedMember,
  leaderIndex: number,
  maxLag: number,
): string | undefined {
  if (m.isLearner) return "a learner";
  if (!m.started) return "not started";
  if (!m.healthy) return "not healthy";
  if (m.raftIndex === undefined) return "its raft index is unknown";
  if (leader.clusterID !== undefined && m.clusterID !== undefined && m.clusterID !== leader.clusterID) {
    return `in cluster ${m.clusterID}, not the leader's ${leader.clusterID}`;
  }
  if (leaderIndex - m.raftIndex > maxLag) {
    return `${leaderIndex - m.raftIndex} raft entries behind the leader (more than ${maxLag})`;
  }
  return undefined;
}

/** Picks the member to snapshot; see the module comment for the rules. */
export function chooseBackupMember(
  members: ObservedMember[],
  maxLag: number = DEFAULT_MAX_BACKUP_LAG,
): BackupMemberChoice {
  const leaders = members.filter((m) => m.leader && !m.isLearner);
  const leader = leaders[0];
  if (leader === undefined || leaders.length > 1) {
    return {
      ok: false,
      reason:
        leader === undefined
          ? "no member reports itself leader: without a quorum no member can be shown to be caught up"
          : `several members report themselves leader (${leaders.map((m) => m.name).join(", ")}): waiting for one`,
    };
  }
  if (leader.raftIndex === undefined) {
    return {
      ok: false,
      reason: `the leader ${leader.name} reports no raft index: no member can be shown caught up`,
    };
  }
  const leaderIndex = leader.raftIndex;
  const refusals: string[] = [];
  const fit = members.filter((m) => {
    const why = unfit(m, leader, leaderIndex, maxLag);
    if (why !== undefined) refusals.push(`${m.name || m.id}: ${why}`);
    return why === undefined;
  });
  const best = fit.sort(
    (a, b) =>
      Number(a.leader) - Number(b.leader) ||
      (b.raftIndex ?? 0) - (a.raftIndex ?? 0) ||
      (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
  )[0];
  if (best === undefined)
    return { ok: false, reason: `no member can serve a snapshot: ${refusals.join("; ")}` };
  return {
    ok: true,
    member: best.name,
    leader: best.leader,
    raftIndex: best.raftIndex ?? 0,
    ...(best.version === undefined ? {} : { version: best.version }),
  };
}
