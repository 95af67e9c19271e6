// What a reconcile's actions are given and what they answer (act.ts, restore/bootstrap-restore.ts,
// restore/recovery.ts): types only, in a leaf module, so the action modules never import one another for them.
import type { Client } from "@capstan/core";
import type { EtcdBackup } from "../../api/backup.ts";
import type { EtcdCluster } from "../../api/etcd-cluster.ts";
import type { RestoreFrom } from "../../desired/restore-job.ts";
import type { EtcdClient, EtcdClientAuth, EtcdClientTLS } from "../../etcd/etcd-client.ts";
import type { ObservedRestore } from "../../plan/types.ts";
import type { Observation } from "./observe.ts";

/** What one reconcile knows about a restore. */
export interface RestoreObservation {
  /** The planner's input. */
  observed: ObservedRestore;
  /** The EtcdBackup named in spec.bootstrap.restore.backup, when it exists. */
  backup?: EtcdBackup;
  /** Where the snapshot is read from, when it can be said. */
  from?: RestoreFrom;
  /** The operator's own image (the Job's download and finish steps). */
  operatorImage?: string;
}

/** What a step did: `done` when it changed something, else why it waits (the step could not be taken yet). */
export type ActResult = { done: true } | { done: false; reason: string; message: string };

/** Everything a step needs. */
export interface ActContext {
  client: Client;
  cluster: EtcdCluster;
  obs: Observation;
  /** Creates the etcd client for membership calls (replaced in tests). */
  etcdClient?: (endpoints: string[], tls?: EtcdClientTLS, auth?: EtcdClientAuth) => EtcdClient;
  /** The operator's client TLS, when the cluster's client port has it. */
  tls?: EtcdClientTLS;
  /** The root credentials, when the cluster has (or is to have) etcd authentication. */
  auth?: EtcdClientAuth;
  /**
   * Called before a member's pod is created (issues its certificate); returns annotations for the pod (its
   * certificates' fingerprints, the CAs it starts trusting).
   */
  beforePod?: (member: string) => Promise<Record<string, string>>;
  /**
   * Called before a member is added or its pod created (cert-manager's certificates requested); a reason to wait
   * while one is not issued yet.
   */
  memberPending?: (member: string) => Promise<{ reason: string; message: string } | undefined>;
  signal?: AbortSignal;
  /** What the reconcile observed of spec.bootstrap.restore. */
  restore?: RestoreObservation;
}
