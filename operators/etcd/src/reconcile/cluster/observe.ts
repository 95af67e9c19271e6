// Observation: what the cache says about a cluster's pods and volumes, and what etcd says about its members.
import {
  type Cache,
  claimBelongsTo,
  PersistentVolumeClaim,
  type PersistentVolumeClaimObject,
  Pod,
  type PodObject,
} from "@capstan/core";
import type { EtcdCluster, EtcdMemberStatus } from "../../api/etcd-cluster.ts";
import { KEPT_BY_RESTORE_LABEL } from "../../api/etcd-restore.ts";
import { etcdImage, POD_TEMPLATE_HASH_ANNOTATION, podTemplateHash } from "../../desired/member-pod.ts";
import {
  CLAIM_UID_LABEL,
  CLIENT_PORT,
  clientScheme,
  clusterRef,
  MEMBER_LABEL,
  memberNameFromPeerURL,
  SEED_CLAIM_ANNOTATION,
  selectorLabels,
} from "../../desired/names.ts";
import {
  EtcdAuthError,
  EtcdClient,
  type EtcdClientAuth,
  type EtcdClientTLS,
  type EtcdMember,
  memberIdToHex,
} from "../../etcd/etcd-client.ts";
import type {
  Observed,
  ObservedAlarm,
  ObservedMember,
  ObservedPod,
  TerminatingPod,
} from "../../plan/plan.ts";
import { classifyEtcdFailure } from "../../plan/quorum-evidence.ts";
import { observeAuth } from "./auth.ts";

/** Timeout of each etcd call made while observing: a dead member must not stall the reconcile. */
export const OBSERVE_TIMEOUT_MS = 3_000;

/** Everything one reconcile knows about a cluster. */
export interface Observation {
  /** The planner's input. */
  observed: Observed;
  /** Member pods by member name, including pods being deleted and failed pods. */
  pods: Map<string, PodObject>;
  /** Member data claims by member name. */
  claims: Map<string, PersistentVolumeClaimObject>;
  /** etcd's member list (decimal IDs), when etcd answered. */
  members: EtcdMember[];
  /** status.members as observed. */
  memberStatus: EtcdMemberStatus[];
  /** Cluster ID in hexadecimal, when etcd answered. */
  clusterID?: string;
  /** Client URLs of the live member pods (by pod IP), ready pods first. */
  endpoints: string[];
}

/**
 * Creates the etcd client for a set of endpoints, with the client TLS when the cluster has it and the root
 * credentials when it has auth (replaced in tests).
 */
export type EtcdClientFactory = (
  endpoints: string[],
  tls?: EtcdClientTLS,
  auth?: EtcdClientAuth,
) => EtcdClient;

/** The default {@link EtcdClientFactory}. */
export const defaultEtcdClient: EtcdClientFactory = (endpoints, tls, auth) =>
  new EtcdClient({
    endpoints,
    timeoutMs: OBSERVE_TIMEOUT_MS,
    ...(tls === undefined ? {} : { tls }),
    ...(auth === undefined ? {} : { auth }),
  });

/** Member name of a pod or claim (its member label; pods are also named after their member). */
function memberOf(obj: PodObject | PersistentVolumeClaimObject): string | undefined {
  return obj.metadata.labels?.[MEMBER_LABEL];
}

/** True when the pod is running and its Ready condition is True. */
export function podReady(pod: PodObject): boolean {
  return pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true;
}

/** True when the pod will never run again (deleted, or terminated for good). */
export function podGone(pod: PodObject): boolean {
  const phase = pod.status?.phase;
  return pod.metadata.deletionTimestamp !== undefined || phase === "Failed" || phase === "Succeeded";
}

/** Waiting reasons of a container whose image cannot be pulled. */
const IMAGE_PULL_REASONS = new Set([
  "ErrImagePull",
  "ImagePullBackOff",
  "InvalidImageName",
  "ErrImageNeverPull",
]);

/**
 * What etcd writes when it is restarted as an existing member on an empty data directory: with only itself in
 * --initial-cluster (how the operator restarts a member) it cannot fetch the cluster; with an older pod's full
 * list it rejoins under its old ID and panics on the leader's first heartbeat. The container's termination
 * message (FallbackToLogsOnError) carries it.
 */
const DATA_LOST_MESSAGES = [
  "cannot fetch cluster info from peer urls",
  "Was the raft log corrupted, truncated, or lost?",
];

/** The planner's view of a pod; `image` is the image spec.version asks for. */
function observedPod(name: string, pod: PodObject, templateHash: string, image: string): ObservedPod {
  const ready = podReady(pod);
  const cond = pod.status?.conditions?.find((c) => c.type === "Ready");
  const since = !ready && cond?.lastTransitionTime ? new Date(cond.lastTransitionTime) : undefined;
  const outdated = pod.metadata.annotations?.[POD_TEMPLATE_HASH_ANNOTATION] !== templateHash;
  const scheduled = pod.status?.conditions?.find((c) => c.type === "PodScheduled");
  const unschedulableSince =
    scheduled?.status === "False" && scheduled.reason === "Unschedulable" && scheduled.lastTransitionTime
      ? new Date(scheduled.lastTransitionTime)
      : undefined;
  const container = pod.status?.containerStatuses?.find((c) => c.name === "etcd");
  const waiting = container?.state?.waiting;
  const podImage = pod.spec?.containers.find((c) => c.name === "etcd")?.image ?? container?.image ?? "";
  // After an in-place image change to an image that cannot be pulled, the kubelet alternates the pull errors with
  // CrashLoopBackOff ("back-off restarting failed container"), while the container it reports is still the old
  // image's: the pod's image has never run. That is the same pull failure, not a member that died (which the
  // planner would replace after memberNotReadySeconds, claim and all).
  const reported = container?.image;
  const neverRan =
    waiting?.reason === "CrashLoopBackOff" &&
    reported !== undefined &&
    reported !== "" &&
    reported !== podImage &&
    !reported.endsWith(`/${podImage}`);
  const imagePullError =
    waiting?.reason !== undefined && IMAGE_PULL_REASONS.has(waiting.reason)
      ? { image: podImage, reason: waiting.reason, current: podImage === image }
      : neverRan
        ? { image: podImage, reason: `CrashLoopBackOff, still on ${reported}`, current: podImage === image }
        : undefined;
  // Only the latest failure counts: while etcd runs again, lastState is history. A learner whose first join
  // failed ("cannot fetch cluster info": with peer TLS the leader refuses its handshake until its DNS name
  // resolves to its new IP) and which joined on the kubelet's restart keeps that message in lastState.
  const messages = [
    container?.state?.terminated?.message,
    container?.state?.running === undefined ? container?.lastState?.terminated?.message : undefined,
  ];
  const dataLost = messages.some((m) => m !== undefined && DATA_LOST_MESSAGES.some((d) => m.includes(d)));
  const running = container === undefined ? undefined : container.state?.running !== undefined;
  return {
    name,
    ready,
    ...(running === undefined ? {} : { running }),
    ...(since === undefined ? {} : { notReadySince: since }),
    ...(outdated ? { outdated } : {}),
    ...(unschedulableSince === undefined ? {} : { unschedulableSince }),
    ...(imagePullError === undefined ? {} : { imagePullError }),
    ...(dataLost ? { dataLost } : {}),
  };
}

/** Reads the cluster's pods and claims from the cache, then asks etcd (through the pods' IPs) about its members. */
export async function observe(
  cluster: EtcdCluster,
  cache: Cache,
  etcdClient: EtcdClientFactory,
  signal?: AbortSignal,
  tls?: EtcdClientTLS,
  auth?: EtcdClientAuth,
): Promise<Observation> {
  const { namespace } = clusterRef(cluster);
  const uid = cluster.metadata.uid;
  const mine = (o: PodObject) =>
    o.metadata.ownerReferences?.some((r) => r.controller === true && r.uid === uid) === true;
  // A claim is ours when we control it (whenDeleted Delete) or, controlled by nothing (Retain), it was made for this
  // cluster (its uid label): never one kept from an earlier EtcdCluster of the same name, nor one a restore keeps.
  const ours = (c: PersistentVolumeClaimObject) =>
    claimBelongsTo(cluster, c, CLAIM_UID_LABEL) && c.metadata.labels?.[KEPT_BY_RESTORE_LABEL] === undefined;
  const labels = selectorLabels(cluster);

  const pods = new Map<string, PodObject>();
  for (const pod of await cache.list(Pod, { namespace, labels })) {
    const name = memberOf(pod);
    if (name !== undefined && mine(pod)) pods.set(name, pod);
  }
  const claims = new Map<string, PersistentVolumeClaimObject>();
  for (const pvc of await cache.list(PersistentVolumeClaim, { namespace, labels })) {
    const name = memberOf(pvc);
    if (name !== undefined && ours(pvc) && pvc.metadata.deletionTimestamp === undefined)
      claims.set(name, pvc);
  }

  const live = [...pods.entries()].filter(([, p]) => !podGone(p));
  const templateHash = podTemplateHash(cluster);
  const image = etcdImage(cluster);
  const observedPods = live.map(([name, pod]) => observedPod(name, pod, templateHash, image));
  const terminating: TerminatingPod[] = [...pods.entries()]
    .filter(([, p]) => p.metadata.deletionTimestamp !== undefined)
    .map(([name, p]) => ({ name, since: new Date(p.metadata.deletionTimestamp!) }));
  const endpointOf = (pod: PodObject) =>
    pod.status?.podIP ? `${clientScheme(cluster)}://${pod.status.podIP}:${CLIENT_PORT}` : undefined;
  const endpoints = live
    .sort(([, a], [, b]) => Number(podReady(b)) - Number(podReady(a)))
    .map(([, pod]) => endpointOf(pod))
    .filter((e) => e !== undefined);

  const base = {
    pods,
    claims,
    endpoints,
    members: [] as EtcdMember[],
    memberStatus: [] as EtcdMemberStatus[],
  };
  const bootstrapped = cluster.status?.clusterID !== undefined;
  const volumes = [...claims.keys()];
  const seedVolumes = [...claims.entries()]
    .filter(([, c]) => c.metadata.annotations?.[SEED_CLAIM_ANNOTATION] === "true")
    .map(([name]) => name);
  const knownMembers = (cluster.status?.members ?? []).map((m) => m.name);
  const knownVoters = (cluster.status?.members ?? []).filter((m) => !m.learner).map((m) => m.name);
  const known = {
    ...(cluster.status?.clusterID === undefined ? {} : { knownClusterID: cluster.status.clusterID }),
    ...(cluster.status?.currentVersion === undefined ? {} : { knownVersion: cluster.status.currentVersion }),
    terminating,
  };
  if (endpoints.length === 0) {
    return {
      ...base,
      observed: {
        etcd: { reachable: false, error: "no member pod has an IP address", failure: "network" },
        pods: observedPods,
        volumes,
        seedVolumes,
        bootstrapped,
        knownMembers,
        knownVoters,
        ...known,
      },
    };
  }

  const client = etcdClient(endpoints, tls, auth);
  let list: Awaited<ReturnType<EtcdClient["memberList"]>>;
  try {
    list = await client.memberList(signal === undefined ? {} : { signal });
  } catch (err) {
    signal?.throwIfAborted();
    // etcd answered but refused the operator's credentials: auth is on, and the planner says so (Degraded).
    const refused =
      err instanceof EtcdAuthError
        ? {
            auth: { enabled: true, failure: { reason: err.reason, message: err.etcdMessage ?? err.message } },
          }
        : {};
    // What kind of failure (plan/quorum-evidence.ts): the operator's credentials, its TLS, or its reach; never
    // read as the members' loss of quorum by itself.
    const error = err instanceof Error ? err.message : String(err);
    const failure = err instanceof EtcdAuthError ? "auth" : classifyEtcdFailure(error);
    return {
      ...base,
      observed: {
        ...refused,
        etcd: { reachable: false, error, failure },
        pods: observedPods,
        volumes,
        seedVolumes,
        bootstrapped,
        knownMembers,
        knownVoters,
        ...known,
      },
    };
  }

  // Ask each member with a pod for its status and health, in parallel; and the cluster for its alarms.
  const call = signal === undefined ? {} : { signal };
  const alarmsRead = client.alarmList(call).catch(() => undefined);
  const probes = await Promise.all(
    list.members.map(async (m) => {
      const name = m.name || memberNameFromPeerURL(m.peerURLs[0] ?? "") || m.name;
      const pod = pods.get(name);
      const endpoint = pod === undefined || podGone(pod) ? undefined : endpointOf(pod);
      if (endpoint === undefined) return { m, name };
      const [status, health] = await Promise.all([
        client.status(endpoint, call).catch(() => undefined),
        m.isLearner ? Promise.resolve(undefined) : client.health(endpoint, call),
      ]);
      return { m, name, status, health };
    }),
  );
  const alarmList = await alarmsRead;
  const authState = cluster.spec.auth === undefined ? undefined : await observeAuth(cluster, client, signal);
  signal?.throwIfAborted();

  const leaderId = probes.find((p) => p.status !== undefined && p.status.leader !== "0")?.status?.leader;
  const members: ObservedMember[] = probes.map(({ m, name, status, health }) => ({
    id: memberIdToHex(m.id),
    name,
    peerURLs: m.peerURLs,
    isLearner: m.isLearner,
    started: m.name !== "",
    // A learner cannot serve /readyz's linearizable read; it is healthy when it answers its status.
    healthy: m.isLearner ? status !== undefined : health?.healthy === true,
    ...(m.isLearner || health === undefined || health.healthy
      ? {}
      : {
          healthError: health.reason ?? "unhealthy",
          healthFailure: classifyEtcdFailure(health.reason ?? ""),
        }),
    leader: leaderId !== undefined && m.id === leaderId,
    ...(status?.version ? { version: status.version } : {}),
    ...(status === undefined
      ? {}
      : {
          raftIndex: status.raftIndex,
          clusterID: memberIdToHex(status.header.clusterId),
          dbSize: status.dbSize,
          dbSizeInUse: status.dbSizeInUse,
        }),
  }));

  // A learner is judged by progress: when its raft index was last seen to advance (kept in status.members).
  const now = new Date();
  const previous = new Map((cluster.status?.members ?? []).map((m) => [m.name, m]));
  const learnerProgress: Record<string, Date> = {};
  const progressOf = (m: ObservedMember): { raftIndex?: number; progressTime?: string } => {
    if (!m.isLearner) return {};
    const before = previous.get(m.name);
    const advanced =
      m.raftIndex !== undefined && (before?.raftIndex === undefined || m.raftIndex > before.raftIndex);
    // The stored string is kept as is while nothing moves, so a stalled learner causes no status write.
    const progressTime =
      advanced || before?.progressTime === undefined ? now.toISOString() : before.progressTime;
    learnerProgress[m.name] = new Date(progressTime);
    const raftIndex = advanced ? m.raftIndex : before?.raftIndex;
    return { ...(raftIndex === undefined ? {} : { raftIndex }), progressTime };
  };
  const memberStatus: EtcdMemberStatus[] = members
    .map((m, i) => ({
      name: m.name,
      id: m.id,
      peerURL: m.peerURLs[0] ?? "",
      clientURLs: list.members[i]?.clientURLs ?? [],
      ...(m.version === undefined ? {} : { version: m.version }),
      healthy: m.healthy,
      learner: m.isLearner,
      leader: m.leader,
      ...progressOf(m),
    }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const nameOfId = new Map(members.map((m) => [m.id, m.name]));
  const alarms: ObservedAlarm[] | undefined = alarmList?.map((a) => {
    const id = memberIdToHex(a.memberId);
    return { member: nameOfId.get(id) ?? id, alarm: a.alarm };
  });
  const clusterID = memberIdToHex(list.header.clusterId);

  return {
    ...base,
    members: list.members,
    memberStatus,
    clusterID,
    observed: {
      etcd: { reachable: true, members, clusterID, ...(alarms === undefined ? {} : { alarms }) },
      pods: observedPods,
      volumes,
      seedVolumes,
      bootstrapped,
      knownMembers,
      knownVoters,
      learnerProgress,
      ...(authState === undefined ? {} : { auth: authState }),
      ...known,
    },
  };
}
