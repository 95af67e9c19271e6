// Test fixture shared by the reconcile tests (imported by tests only): the EtcdCluster ns/demo, its running member
// pods and data claims as the in-memory API server holds them, a scripted healthy etcd answering for them, and one
// EtcdCluster reconcile run against core's reconcileOnce.
import type { Client, KubeObject } from "@capstan/core";
import { type ReconcileOnceOptions, type ReconcileRun, reconcileOnce } from "@capstan/core/testing";
import { Registry } from "prom-client";
import { EtcdBackupKind } from "../api/backup.ts";
import { type EtcdCluster, EtcdClusterKind, type EtcdClusterSpec } from "../api/etcd-cluster.ts";
import { EtcdRestoreKind } from "../api/etcd-restore.ts";
import { CertificateKind } from "../desired/cert-manager.ts";
import { memberDataClaim } from "../desired/cluster-objects.ts";
import { memberPod } from "../desired/member-pod.ts";
import { peerURL } from "../desired/names.ts";
import type { EtcdClient, EtcdClientTLS, EtcdMember } from "../etcd/etcd-client.ts";
import { type EtcdClusterControllerOptions, reconcileEtcdCluster } from "./cluster/controller.ts";
import type { EtcdClientFactory } from "./cluster/observe.ts";
import { EtcdOperatorMetrics } from "./metrics.ts";

/** The members of the fixture's cluster. */
export const MEMBERS = ["demo-a", "demo-b", "demo-c"] as const;

/** The EtcdCluster ns/demo (uid u1), 3 replicas of etcd 3.6.15, bootstrapped (cluster ID ff); `spec` overrides. */
export function testCluster(
  spec: Partial<EtcdClusterSpec> = {},
  metadata: Partial<EtcdCluster["metadata"]> = {},
): EtcdCluster {
  return {
    apiVersion: EtcdClusterKind.apiVersion,
    kind: EtcdClusterKind.kind,
    metadata: { name: "demo", namespace: "ns", uid: "u1", generation: 1, ...metadata },
    spec: { replicas: 3, version: "3.6.15", repository: "r", storage: { size: "1Gi" }, ...spec },
    status: { clusterID: "ff", observedGeneration: 1 },
  };
}

/** The running, ready pod (IP 10.0.0.<i+1>) and the data claim of each of `names`. */
export function runningMembers(cluster: EtcdCluster, names: readonly string[] = MEMBERS): KubeObject[] {
  const initial = names.map((n) => ({ name: n, peerURL: peerURL(cluster, n) }));
  return names.flatMap((n, i) => {
    const pod = memberPod({ cluster, member: n, initialCluster: initial, initialClusterState: "existing" });
    pod.status = {
      phase: "Running",
      podIP: `10.0.0.${i + 1}`,
      conditions: [{ type: "Ready", status: "True", lastTransitionTime: "2026-11-30T00:00:00Z" }],
    };
    return [pod, memberDataClaim(cluster, n)!];
  });
}

/** What a {@link healthyEtcd} records. */
export interface EtcdRecord {
  /** "list", "list linearizable", "remove <id>", in order. */
  calls: string[];
  /** The endpoints and TLS each client was made with. */
  clients: { endpoints: string[]; tls: EtcdClientTLS | undefined }[];
}

/** A new, empty {@link EtcdRecord}. */
export const etcdRecord = (): EtcdRecord => ({ calls: [], clients: [] });

/**
 * A healthy etcd of voters `names` (IDs 101, 102, ... in order), led by the first, every member at raft index 100;
 * member removal is accepted. Records into `record`.
 */
export function healthyEtcd(
  cluster: EtcdCluster,
  record: EtcdRecord = etcdRecord(),
  names: readonly string[] = MEMBERS,
): EtcdClientFactory {
  const members: EtcdMember[] = names.map((n, i) => ({
    id: String(101 + i),
    name: n,
    peerURLs: [peerURL(cluster, n)],
    clientURLs: [],
    isLearner: false,
  }));
  const header = { clusterId: "255", memberId: "101", revision: 1, raftTerm: 1 };
  return (endpoints, tls) => {
    record.clients.push({ endpoints, tls });
    return {
      memberList: async (o: { linearizable?: boolean } = {}) => {
        record.calls.push(o.linearizable === true ? "list linearizable" : "list");
        return { header, members };
      },
      status: async (endpoint: string) => memberStatus(endpoint, header),
      health: async (endpoint: string) => ({ endpoint, healthy: true }),
      alarmList: async () => [],
      memberRemove: async (id: string) => void record.calls.push(`remove ${id}`),
    } as unknown as EtcdClient;
  };
}

/**
 * One reconcile of `cluster` among `objects` (fresh metrics; `options` add to or replace the defaults; `setup`
 * scripts the API server's answers, e.g. faults).
 */
export function reconcileCluster(
  cluster: EtcdCluster,
  objects: readonly KubeObject[],
  options: Partial<EtcdClusterControllerOptions> = {},
  setup?: ReconcileOnceOptions["setup"],
): Promise<ReconcileRun> {
  return reconcileOnce(
    (req, ctx) =>
      reconcileEtcdCluster(req, ctx, {
        metrics: new EtcdOperatorMetrics(new Registry()),
        etcdClient: healthyEtcd(cluster),
        ...options,
      }),
    {
      // cert-manager's Certificate: seeded by the tests of spec.tls.<port>.certManager (with backups and restores).
      kinds: [EtcdClusterKind, CertificateKind, EtcdBackupKind, EtcdRestoreKind],
      objects: [cluster, ...objects],
      request: cluster,
      ...(setup === undefined ? {} : { setup }),
    },
  );
}

/** An API call a {@link recordingClient} recorded: verb (a patch's with its type, "patch:merge"), kind, name, body. */
export interface RecordedCall {
  verb: string;
  kind: string;
  name: string;
  /** The object created, the patch, or "force" for a delete with grace period 0. */
  body?: unknown;
}

/** A client that records creates, deletes and patches, and answers like an empty API server. */
export function recordingClient(): { client: Client; calls: RecordedCall[] } {
  const calls: RecordedCall[] = [];
  const client = {
    create: async (kind: { kind: string }, obj: KubeObject) => {
      calls.push({ verb: "create", kind: kind.kind, name: obj.metadata.name ?? "", body: obj });
      return obj;
    },
    delete: async (
      kind: { kind: string },
      name: string,
      _ns: string,
      o?: { gracePeriodSeconds?: number },
    ) => {
      calls.push({
        verb: "delete",
        kind: kind.kind,
        name,
        ...(o?.gracePeriodSeconds === 0 ? { body: "force" } : {}),
      });
    },
    patch: async (kind: { kind: string }, name: string, _ns: string, body: unknown, type: string) => {
      calls.push({ verb: `patch:${type}`, kind: kind.kind, name, body });
      return {};
    },
  };
  return { client: client as unknown as Client, calls };
}

/** What a healthy 3.6.15 voter answers to Maintenance.Status in the scripted etcds of these tests. */
export function memberStatus(endpoint: string, header: object, leader = "101") {
  return {
    endpoint,
    header,
    memberId: "0",
    leader,
    version: "3.6.15",
    dbSize: 1,
    dbSizeInUse: 1,
    raftIndex: 100,
    raftTerm: 1,
    raftAppliedIndex: 100,
    isLearner: false,
    errors: [],
  };
}
