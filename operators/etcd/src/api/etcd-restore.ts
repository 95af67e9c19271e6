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
  type KubeObject,
} from "@capstan/core";
import * as Type from "typebox/type";
import { GROUP, VERSION } from "./group.ts";
import { restoreSourceSchema } from "./restore-source.ts";

/** Label on a claim a recovery kept for the user (its member was replaced): the EtcdRestore's name. */
export const KEPT_BY_RESTORE_LABEL = "etcd.capstan.dev/kept-by-restore";

/**
 * Finalizer on an EtcdRestore, added before its first write to the cluster and released once it has ended (or its
 * EtcdCluster is gone): deleting the request before the fork gives back what it took first; after the fork the
 * deletion waits for the recovery to finish.
 */
export const RECOVERY_FINALIZER = "etcd.capstan.dev/recovery";

/** Label on an EtcdRestore the operator created itself (spec.recovery.automatic): the cluster's name. */
export const AUTOMATIC_RESTORE_LABEL = "etcd.capstan.dev/automatic-recovery";

/** A recovery in this phase has ended: it changes nothing any more and its finalizer is released. */
export function restoreEnded(phase: EtcdRestorePhase | undefined): boolean {
  return phase === "Succeeded" || phase === "Failed" || phase === "Cancelled";
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

const restoreSpecSchema = Type.Object(
  {
    clusterName: Type.String({
      description: "The EtcdCluster, in the same namespace, that lost quorum.",
      minLength: 1,
      maxLength: 50,
    }),
    from: Type.Enum(["Survivor", "Backup"], {
      type: "string",
      description:
        "Survivor: the member with the most recent data (highest raft index) is restarted once with --force-new-cluster, the others are replaced by learners. Backup: every old member's claim is kept and its pod stopped, a new seed is restored from spec.source and started as a new cluster (new cluster ID, revision bumped), and the cluster grows back with learners.",
    }),
    source: Type.Optional(
      restoreSourceSchema(
        "source",
        "With from: Backup (required then): the snapshot, exactly one of backup, s3 or pvc, as in an EtcdCluster's spec.bootstrap.restore. It is checked (backup Succeeded, sha256, etcd version against the cluster's spec.version) before anything of the cluster is changed.",
      ),
    ),
  },
  {
    description: "The recovery asked for; immutable.",
    "x-kubernetes-validations": [
      { rule: "self == oldSelf", message: "spec is immutable: create another EtcdRestore" },
      {
        rule: "self.from == 'Backup' ? has(self.source) : !has(self.source)",
        message: "spec.source is required with from: Backup and not allowed with from: Survivor",
        fieldPath: ".source",
      },
    ],
  },
);

/** The desired recovery; immutable. */
export type EtcdRestoreSpec = Type.Static<typeof restoreSpecSchema>;

/** What to recover from. */
export type EtcdRestoreFrom = EtcdRestoreSpec["from"];

const restoreStatusSchema = Type.Object({
  phase: Type.Optional(
    Type.Enum(["Pending", "Running", "Succeeded", "Failed", "Cancelled"], {
      type: "string",
      description:
        "Running until it ends: Succeeded, Failed, or Cancelled (a quorum answered again before the cluster was forked: every claim it kept was given back and the survivor mark removed).",
    }),
  ),
  message: Type.Optional(
    Type.String({
      description:
        "Why it failed or was cancelled, or what it waits for (a deletion held after the fork says so).",
    }),
  ),
  // Conditions pass through unvalidated here (not core's conditionsSchema): the CRD has always said so.
  conditions: Type.Optional(
    Type.Unsafe<Condition[]>({
      type: "array",
      items: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
    }),
  ),
  survivor: Type.Optional(Type.String({ description: "The member recovered from." })),
  raftIndex: Type.Optional(
    Type.Integer({ format: "int64", description: "The survivor's raft index when chosen." }),
  ),
  // From a backup: the snapshot's plus bumpRevision.
  revision: Type.Optional(Type.Integer({ format: "int64", description: "The revision recovered to." })),
  // backup/<name>, s3://<bucket>/<key> or pvc://<claim>/<path>.
  source: Type.Optional(Type.String({ description: "From a backup: the snapshot restored." })),
  snapshotRevision: Type.Optional(
    Type.Integer({
      format: "int64",
      description: "From a backup: the snapshot's revision (when its EtcdBackup recorded it).",
    }),
  ),
  seed: Type.Optional(
    Type.String({ description: "From a backup: the new seed member restored from the snapshot." }),
  ),
  clusterID: Type.Optional(Type.String({ description: "The cluster ID after the recovery (hexadecimal)." })),
  keptClaims: Type.Optional(
    Type.Array(Type.String(), {
      description:
        "Claims of the replaced members, kept (labelled etcd.capstan.dev/kept-by-restore=<name>); delete them yourself once no longer needed. A recovery called off before the fork gives each back to the cluster and drops it from this list.",
    }),
  ),
  startTime: Type.Optional(Type.String({ format: "date-time" })),
  completionTime: Type.Optional(Type.String({ format: "date-time" })),
});

/** The observed recovery. */
export type EtcdRestoreStatus = Type.Static<typeof restoreStatusSchema>;

/** The life cycle of one recovery; Cancelled: called off by a quorum answering again before the fork. */
export type EtcdRestorePhase = NonNullable<EtcdRestoreStatus["phase"]>;

/** The openAPIV3Schema of EtcdRestore. */
export const etcdRestoreSchema = Type.Object(
  {
    apiVersion: Type.Optional(Type.String()),
    kind: Type.Optional(Type.String()),
    metadata: Type.Optional(Type.Unsafe<Record<string, unknown>>({ type: "object" })),
    spec: restoreSpecSchema,
    status: Type.Optional(restoreStatusSchema),
  },
  {
    description:
      "A one-shot recovery of an EtcdCluster that lost quorum, from the surviving member with the most recent data or from a backup. Deleting it before the cluster is forked (force-new-cluster, or the seed's restore) calls the recovery off: the claims it kept are given back and the stopped members start again; after the fork the deletion waits for the recovery to finish (finalizer etcd.capstan.dev/recovery).",
  },
);

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
