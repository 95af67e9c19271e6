// Performs the planner's one step against the API server and etcd. Each step is safe to repeat: the next
// reconcile re-observes and plans again, so an interrupted step is finished or cleaned up then.
import { isAlreadyExists, isNotFound, PersistentVolumeClaim, Pod } from "@capstan/core";
import { memberDataClaim } from "../../desired/cluster-objects.ts";
import { etcdImage, memberPod } from "../../desired/member-pod.ts";
import {
  CLIENT_PORT,
  clientScheme,
  clusterRef,
  dataClaimName,
  memberNameFromPeerURL,
  peerURL,
} from "../../desired/names.ts";
import { EtcdClient } from "../../etcd/etcd-client.ts";
import type { Step } from "../../plan/plan.ts";
import { finishRestore, startRestore } from "../restore/bootstrap-restore.ts";
import type { ActContext, ActResult } from "./act-context.ts";
import { actAuth } from "./auth.ts";

/** Timeout of one membership call (MemberAdd, MemberPromote, MemberRemove, MoveLeader) to one member. */
export const MEMBERSHIP_TIMEOUT_MS = 10_000;
/** Timeout of a defragmentation (it rewrites the whole database file). */
export const DEFRAG_TIMEOUT_MS = 5 * 60_000;

export type { ActContext, ActResult } from "./act-context.ts";

const DONE: ActResult = { done: true };

/** Decimal member ID (etcd's JSON gateway) from the hexadecimal form the planner and status use. */
export function memberIdToDecimal(hex: string): string {
  return BigInt(`0x${hex}`).toString(10);
}

/** Performs `step`. Steps that only report (Wait, InSync, Degraded, QuorumLost) do nothing. */
export async function act(step: Step, ctx: ActContext): Promise<ActResult> {
  const etcd = (without?: string) =>
    (
      ctx.etcdClient ??
      ((e, tls, auth) =>
        new EtcdClient({
          endpoints: e,
          timeoutMs: MEMBERSHIP_TIMEOUT_MS,
          ...(tls === undefined ? {} : { tls }),
          ...(auth === undefined ? {} : { auth }),
        }))
    )(endpointsWithout(ctx, without), ctx.tls, ctx.auth);
  const call = ctx.signal === undefined ? {} : { signal: ctx.signal };
  switch (step.type) {
    case "CreateSeed":
      return startMember(
        ctx,
        step.name,
        "new",
        [{ name: step.name, peerURL: peerURL(ctx.cluster, step.name) }],
        { seed: true },
      );
    case "StartMemberPod": {
      if (step.reason === "PodMissing") {
        // A restart on its data: only itself in --initial-cluster. etcd ignores the flag when its data is there;
        // on an empty data dir it then cannot learn the cluster and stops, instead of rejoining under its old ID
        // without its log (the planner sees the message and replaces the member).
        return startMember(ctx, step.name, "existing", [
          { name: step.name, peerURL: peerURL(ctx.cluster, step.name) },
        ]);
      }
      // A member added but never started joins with etcd's member list.
      const initial = ctx.obs.members.map((m) => ({
        name: m.name || memberNameFromPeerURL(m.peerURLs[0] ?? "") || "",
        peerURL: m.peerURLs[0] ?? "",
      }));
      return startMember(ctx, step.name, "existing", initial);
    }
    case "AddLearner": {
      // Its certificates first: it starts only with its names in them.
      const wait = await ctx.memberPending?.(step.name);
      if (wait !== undefined) return { done: false, ...wait };
      await etcd().memberAddAsLearner([peerURL(ctx.cluster, step.name)], call);
      return DONE;
    }
    case "PromoteLearner":
      await etcd().memberPromote(memberIdToDecimal(step.id), call);
      return DONE;
    case "MoveLeader":
      await etcd().moveLeader(memberIdToDecimal(step.to), call);
      return DONE;
    case "RemoveMember":
    case "ReplaceMember": {
      // Asked through the other members: a member asked to remove itself may stop before it answers. The member
      // list is read linearizably first (through a quorum): a member the quorum no longer lists was removed by
      // an interrupted step and only its objects are left to delete.
      const client = etcd(step.name);
      const { members } = await client.memberList({ ...call, linearizable: true });
      const id = memberIdToDecimal(step.id);
      if (members.some((m) => m.id === id)) await client.memberRemove(id, call);
      await deleteMemberObjects(
        ctx,
        step.name,
        step.type === "ReplaceMember" && step.reason === "StuckTerminating",
      );
      return DONE;
    }
    case "CleanupMember": {
      // Delete a member's data only when a quorum confirms it is not a member (a linearizable member list).
      const { members } = await etcd().memberList({ ...call, linearizable: true });
      const listed = members.some(
        (m) => m.name === step.name || memberNameFromPeerURL(m.peerURLs[0] ?? "") === step.name,
      );
      if (listed) {
        return {
          done: false,
          reason: "MemberStillListed",
          message: `not deleting the pod and volume of ${step.name}: a quorum still lists it as a member`,
        };
      }
      await deleteMemberObjects(ctx, step.name);
      return DONE;
    }
    case "Defragment": {
      const ip = ctx.obs.pods.get(step.name)?.status?.podIP;
      if (ip === undefined) {
        return {
          done: false,
          reason: "PodMissing",
          message: `member ${step.name} has no pod IP to defragment`,
        };
      }
      await etcd().defragment(`${clientScheme(ctx.cluster)}://${ip}:${CLIENT_PORT}`, {
        ...call,
        timeoutMs: DEFRAG_TIMEOUT_MS,
      });
      return DONE;
    }
    case "UpgradeMember":
      return upgradeMember(ctx, step.name);
    case "StartRestore":
      return startRestore(ctx, ctx.restore, step.name);
    case "FinishRestore":
      return finishRestore(ctx, step.name);
    case "AddRootUser":
    case "GrantRootRole":
    case "EnableAuth":
    case "DisableAuth":
      return actAuth(step, etcd(), ctx.auth, ctx.signal);
    case "RestartMember":
      // Rule 6 starts it again from the current podTemplate, on its data, once the old pod is gone.
      await deleteIgnoringMissing(ctx, Pod, step.name);
      return DONE;
    default:
      return { done: false, reason: step.type, message: step.message };
  }
}

/** The observed endpoints without the one of member `name` (unless it is the only one). */
function endpointsWithout(ctx: ActContext, name: string | undefined): string[] {
  const ip = name === undefined ? undefined : ctx.obs.pods.get(name)?.status?.podIP;
  const others = ctx.obs.endpoints.filter((e) => ip === undefined || new URL(e).hostname !== ip);
  return others.length > 0 ? others : ctx.obs.endpoints;
}

/** Creates a member's data claim (if persistent and missing) and its pod, unless the old pod is still going away. */
async function startMember(
  ctx: ActContext,
  name: string,
  state: "new" | "existing",
  initialCluster: { name: string; peerURL: string }[],
  claimOptions: { seed?: boolean } = {},
): Promise<ActResult> {
  const old = ctx.obs.pods.get(name);
  if (old !== undefined) {
    // A pod of this name is terminating or has failed: it must be gone before the member starts again.
    if (old.metadata.deletionTimestamp === undefined) await deleteIgnoringMissing(ctx, Pod, name);
    return {
      done: false,
      reason: "PodTerminating",
      message: `waiting for the old pod of ${name} to go away`,
    };
  }
  const wait = await ctx.memberPending?.(name);
  if (wait !== undefined) return { done: false, ...wait };
  const { namespace } = clusterRef(ctx.cluster);
  const claim = memberDataClaim(ctx.cluster, name, claimOptions);
  if (claim !== undefined && !ctx.obs.claims.has(name)) {
    await ctx.client
      .create(PersistentVolumeClaim, claim, ctx.signal === undefined ? {} : { signal: ctx.signal })
      .catch(ignore(isAlreadyExists));
  }
  const pod = memberPod({
    cluster: ctx.cluster,
    member: name,
    initialCluster,
    initialClusterState: state,
  });
  const extra = (await ctx.beforePod?.(name)) ?? {};
  const annotations =
    Object.keys(extra).length === 0 ? pod.metadata.annotations : { ...pod.metadata.annotations, ...extra };
  await ctx.client
    .create(Pod, {
      ...pod,
      metadata: { ...pod.metadata, namespace, ...(annotations === undefined ? {} : { annotations }) },
    })
    .catch(ignore(isAlreadyExists));
  return DONE;
}

/** Moves one member to spec.version in place: the pod's image is changed and the kubelet restarts etcd on its data. */
async function upgradeMember(ctx: ActContext, name: string): Promise<ActResult> {
  const pod = ctx.obs.pods.get(name);
  const image = etcdImage(ctx.cluster);
  if (pod === undefined) return { done: false, reason: "PodMissing", message: `member ${name} has no pod` };
  const index = pod.spec?.containers.findIndex((c) => c.name === "etcd") ?? -1;
  if (index < 0) throw new Error(`pod ${name} has no etcd container`);
  if (pod.spec?.containers[index]?.image === image) {
    return {
      done: false,
      reason: "MemberRestarting",
      message: `member ${name} is restarting on ${image}`,
    };
  }
  await ctx.client.patch(
    Pod,
    name,
    clusterRef(ctx.cluster).namespace,
    [
      { op: "test", path: `/spec/containers/${index}/name`, value: "etcd" },
      { op: "replace", path: `/spec/containers/${index}/image`, value: image },
    ],
    "json",
    ctx.signal === undefined ? {} : { signal: ctx.signal },
  );
  return DONE;
}

/**
 * Deletes a removed member's pod and data claim (both may already be gone). `force`: the pod is stuck
 * terminating (e.g. on an unreachable node) and is deleted at once (grace period 0): the member was removed, so
 * its process can no longer take part in the cluster.
 */
async function deleteMemberObjects(ctx: ActContext, name: string, force = false): Promise<void> {
  await deleteIgnoringMissing(ctx, Pod, name, force ? { gracePeriodSeconds: 0 } : {});
  await deleteIgnoringMissing(ctx, PersistentVolumeClaim, dataClaimName(name));
}

async function deleteIgnoringMissing(
  ctx: ActContext,
  kind: typeof Pod | typeof PersistentVolumeClaim,
  name: string,
  options: { gracePeriodSeconds?: number } = {},
): Promise<void> {
  await ctx.client
    .delete(kind, name, clusterRef(ctx.cluster).namespace, {
      ...options,
      ...(ctx.signal === undefined ? {} : { signal: ctx.signal }),
    })
    .catch(ignore(isNotFound));
}

function ignore(test: (err: unknown) => boolean): (err: unknown) => undefined {
  return (err) => {
    if (!test(err)) throw err;
    return undefined;
  };
}
