// Membership (planNext rules 11, 12, 13 and 16): scale in one member at a time (learners, then unhealthy
// members, then followers, the leader last), promote a learner once it caught up, wait on a sick cluster, and
// scale out by adding one learner at a time.
import type { ObservedMember, Step } from "./types.ts";
import { byName, names, type View, wait } from "./view.ts";

/** Rule 11. */
export function scaleIn(view: View): Step | undefined {
  if (view.members.length <= view.spec.replicas) return undefined;
  const rank = (m: ObservedMember) => (m.isLearner ? 0 : !view.isWell(m) ? 1 : m.leader ? 3 : 2);
  const victim = [...view.members].sort((a, b) => rank(a) - rank(b) || byName(b, a))[0]!;
  return view.removal(victim, {
    type: "RemoveMember",
    id: victim.id,
    name: victim.name,
    message: `scaling in from ${view.members.length} to ${view.spec.replicas} members: removing ${victim.name}`,
  });
}

/** Rule 12. */
export function learners(view: View): Step | undefined {
  const learner = view.members.find((m) => m.isLearner);
  if (learner === undefined) return undefined;
  const leader = view.members.find((m) => m.leader);
  if (!view.caughtUp(learner)) {
    const progress =
      learner.raftIndex === undefined || leader?.raftIndex === undefined
        ? "its progress is unknown"
        : `raft index ${learner.raftIndex} of the leader's ${leader.raftIndex}`;
    return wait("LearnerCatchingUp", `learner ${learner.name} is catching up (${progress})`);
  }
  return {
    type: "PromoteLearner",
    id: learner.id,
    name: learner.name,
    message: `promoting learner ${learner.name}, which has caught up with the leader`,
  };
}

/** Rule 13. */
export function unhealthy(view: View): Step | undefined {
  const sick = view.members.filter((m) => !view.isWell(m));
  if (sick.length === 0) return undefined;
  return wait("MemberUnhealthy", `waiting for ${names(sick)} to become healthy`);
}

/** Rule 16. */
export function scaleOut(view: View): Step | undefined {
  if (view.members.length >= view.spec.replicas) return undefined;
  const name = view.options.freshName;
  const used = [...view.members.map((m) => m.name), ...view.pods.keys(), ...view.observed.volumes];
  if (used.includes(name)) return wait("NameInUse", `the new member name ${name} is already in use`);
  return {
    type: "AddLearner",
    name,
    message: `scaling out from ${view.members.length} to ${view.spec.replicas} members: adding learner ${name}`,
  };
}
