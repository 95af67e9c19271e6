// EtcdRestore (etcd.capstan.dev/v1alpha1): a one-shot request to recover an EtcdCluster that lost quorum, from its
// surviving member with the most recent data (force-new-cluster) or from a backup (a new seed restored from the
// snapshot, started as a new cluster, grown back with learners). A request object, not a spec field: recovery is
// an action taken once, with its own outcome (survivor, revision, cluster ID, the claims kept), which a field
// re-applied by GitOps would ask for again. The CRD schema and its TypeScript types.
import {
  type Condition,
  type CustomResourceDefinitionObject,
  customResourceDefinition,
  defineKind,
  type JSONSchemaProps,
  type KubeObject,
} from "@capstan/core";
import { GROUP, VERSION } from "./group.ts";
import { type EtcdBootstrapRestore, restoreSourceSchema } from "./restore-source.ts";

/** Label on a claim a recovery kept for the user (its member was replaced): the EtcdRestore's name. */
export const KEPT_BY_RESTORE_LABEL = "etcd.capstan.dev/kept-by-restore";

/**
 * Finalizer on an EtcdRestore, added before its first write to the cluster and released once it has ended (or its
 * EtcdCluster is gone): deleting the request before the fork gives back what it took first; after the fork the
 * deletion waits for the recovery to finish.
 */
export const RECOVERY_FINALIZER = "etcd.capstan.dev/recovery";

/** What to recover from. */
export type EtcdRestoreFrom = "Survivor" | "Backup";

/** Label on an EtcdRestore the operator created itself (spec.recovery.automatic): the cluster's name. */
export const AUTOMATIC_RESTORE_LABEL = "etcd.capstan.dev/automatic-recovery";

/** The desired recovery; immutable. */
export interface EtcdRestoreSpec {
  /** The EtcdCluster, in the same namespace, that lost quorum. */
  clusterName: string;
  /**
   * Survivor: the member with the most recent data becomes a one-member cluster (force-new-cluster). Backup: a new
   * seed is restored from spec.source and started as a new cluster.
   */
  from: EtcdRestoreFrom;
  /** With from: Backup (required then, forbidden otherwise): the snapshot, as spec.bootstrap.restore names one. */
  source?: EtcdBootstrapRestore;
}

/** The life cycle of one recovery; Cancelled: called off by a quorum answering again before the fork. */
export type EtcdRestorePhase = "Pending" | "Running" | "Succeeded" | "Failed" | "Cancelled";

/** A recovery in this phase has ended: it changes nothing any more and its finalizer is released. */
export function restoreEnded(phase: EtcdRestorePhase | undefined): boolean {
  return phase === "Succeeded" || phase === "Failed" || phase === "Cancelled";
}

/** The observed recovery. */
export interface EtcdRestoreStatus {
  phase?: EtcdRestorePhase;
  /** Why it failed, why it was cancelled, or what it waits for. */
  message?: string;
  conditions?: Condition[];
  /** The member recovered from. */
  survivor?: string;
  /** The survivor's raft index when it was chosen. */
  raftIndex?: number;
  /** The revision the cluster was recovered to (from a backup: the snapshot's plus bumpRevision). */
  revision?: number;
  /** From a backup: the snapshot restored (backup/<name>, s3://<bucket>/<key> or pvc://<claim>/<path>). */
  source?: string;
  /** From a backup: the snapshot's revision, when the EtcdBackup recorded it. */
  snapshotRevision?: number;
  /** From a backup: the new seed member the snapshot is restored into. */
  seed?: string;
  /** The cluster ID after the recovery (hexadecimal). */
  clusterID?: string;
  /** Claims of the replaced members, kept for the user (labelled etcd.capstan.dev/kept-by-restore); given back on a call-off. */
  keptClaims?: string[];
  startTime?: string;
  completionTime?: string;
}

/** An EtcdRestore object. */
export interface EtcdRestore extends KubeObject {
  spec: EtcdRestoreSpec;
  status?: EtcdRestoreStatus;
}

/** The EtcdRestore kind descriptor. */
export const EtcdRestoreKind = defineKind<EtcdRestore>({
  group: GROUP,
  version: VERSION,
  kind: "EtcdRestore",
  plural: "etcdrestores",
  namespaced: true,
});

/** The openAPIV3Schema of EtcdRestore. */
export const etcdRestoreSchema: JSONSchemaProps = {
  type: "object",
  description:
    "A one-shot recovery of an EtcdCluster that lost quorum, from the surviving member with the most recent data or from a backup. Deleting it before the cluster is forked (force-new-cluster, or the seed's restore) calls the recovery off: the claims it kept are given back and the stopped members start again; after the fork the deletion waits for the recovery to finish (finalizer etcd.capstan.dev/recovery).",
  required: ["spec"],
  properties: {
    apiVersion: { type: "string" },
    kind: { type: "string" },
    metadata: { type: "object" },
    spec: {
      type: "object",
      description: "The recovery asked for; immutable.",
      required: ["clusterName", "from"],
      properties: {
        clusterName: {
          type: "string",
          description: "The EtcdCluster, in the same namespace, that lost quorum.",
          minLength: 1,
          maxLength: 50,
        },
        from: {
          type: "string",
          enum: ["Survivor", "Backup"],
          description:
            "Survivor: the member with the most recent data (highest raft index) is restarted once with --force-new-cluster, the others are replaced by learners. Backup: every old member's claim is kept and its pod stopped, a new seed is restored from spec.source and started as a new cluster (new cluster ID, revision bumped), and the cluster grows back with learners.",
        },
        source: restoreSourceSchema(
          "source",
          "With from: Backup (required then): the snapshot, exactly one of backup, s3 or pvc, as in an EtcdCluster's spec.bootstrap.restore. It is checked (backup Succeeded, sha256, etcd version against the cluster's spec.version) before anything of the cluster is changed.",
        ),
      },
      "x-kubernetes-validations": [
        { rule: "self == oldSelf", message: "spec is immutable: create another EtcdRestore" },
        {
          rule: "self.from == 'Backup' ? has(self.source) : !has(self.source)",
          message: "spec.source is required with from: Backup and not allowed with from: Survivor",
          fieldPath: ".source",
        },
      ],
    },
    status: {
      type: "object",
      properties: {
        phase: {
          type: "string",
          enum: ["Pending", "Running", "Succeeded", "Failed", "Cancelled"],
          description:
            "Running until it ends: Succeeded, Failed, or Cancelled (a quorum answered again before the cluster was forked: every claim it kept was given back and the survivor mark removed).",
        },
        message: {
          type: "string",
          description:
            "Why it failed or was cancelled, or what it waits for (a deletion held after the fork says so).",
        },
        conditions: {
          type: "array",
          items: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
        },
        survivor: { type: "string", description: "The member recovered from." },
        raftIndex: {
          type: "integer",
          format: "int64",
          description: "The survivor's raft index when chosen.",
        },
        revision: { type: "integer", format: "int64", description: "The revision recovered to." },
        source: { type: "string", description: "From a backup: the snapshot restored." },
        snapshotRevision: {
          type: "integer",
          format: "int64",
          description: "From a backup: the snapshot's revision (when its EtcdBackup recorded it).",
        },
        seed: {
          type: "string",
          description: "From a backup: the new seed member restored from the snapshot.",
        },
        clusterID: { type: "string", description: "The cluster ID after the recovery (hexadecimal)." },
        keptClaims: {
          type: "array",
          items: { type: "string" },
          description:
            "Claims of the replaced members, kept (labelled etcd.capstan.dev/kept-by-restore=<name>); delete them yourself once no longer needed. A recovery called off before the fork gives each back to the cluster and drops it from this list.",
        },
        startTime: { type: "string", format: "date-time" },
        completionTime: { type: "string", format: "date-time" },
      },
    },
  },
};

/** The EtcdRestore CustomResourceDefinition. */
export function etcdRestoreCrd(): CustomResourceDefinitionObject {
  return customResourceDefinition({
    kind: EtcdRestoreKind,
    singular: "etcdrestore",
    schema: etcdRestoreSchema,
    printerColumns: [
      { name: "Cluster", type: "string", jsonPath: ".spec.clusterName" },
      { name: "Phase", type: "string", jsonPath: ".status.phase" },
      { name: "From", type: "string", jsonPath: ".spec.from" },
      { name: "Survivor", type: "string", jsonPath: ".status.survivor", priority: 1 },
      { name: "Revision", type: "integer", jsonPath: ".status.revision" },
      { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
    ],
  });
}
