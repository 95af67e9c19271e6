// EtcdRestore (etcd.capstan.dev/v1alpha1): a one-shot request to recover an EtcdCluster that lost quorum, from its
// surviving member with the most recent data (force-new-cluster). A request object, not a spec field: recovery is
// an action taken once, with its own outcome (survivor, revision, cluster ID, the claims kept), which a field
// re-applied by GitOps would ask for again. The CRD schema and its TypeScript types.
import {
  type Condition,
  type CustomResourceDefinitionObject,
  defineKind,
  type JSONSchemaProps,
  type KubeObject,
} from "@capstan/core";
import { GROUP, VERSION } from "./group.ts";

/** Label on a claim a recovery kept for the user (its member was replaced): the EtcdRestore's name. */
export const KEPT_BY_RESTORE_LABEL = "etcd.capstan.dev/kept-by-restore";

/** What to recover from. Only Survivor is acted on today. */
export type EtcdRestoreFrom = "Survivor";

/** The desired recovery; immutable. */
export interface EtcdRestoreSpec {
  /** The EtcdCluster, in the same namespace, that lost quorum. */
  clusterName: string;
  /** Survivor: the member with the most recent data becomes a one-member cluster (force-new-cluster). */
  from: EtcdRestoreFrom;
}

/** The life cycle of one recovery. */
export type EtcdRestorePhase = "Pending" | "Running" | "Succeeded" | "Failed";

/** The observed recovery. */
export interface EtcdRestoreStatus {
  phase?: EtcdRestorePhase;
  /** Why it failed or what it waits for. */
  message?: string;
  conditions?: Condition[];
  /** The member recovered from. */
  survivor?: string;
  /** The survivor's raft index when it was chosen. */
  raftIndex?: number;
  /** The revision the cluster was recovered to. */
  revision?: number;
  /** The cluster ID after the recovery (hexadecimal). */
  clusterID?: string;
  /** Claims of the replaced members, kept for the user (labelled etcd.capstan.dev/kept-by-restore). */
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
    "A one-shot recovery of an EtcdCluster that lost quorum, from the surviving member with the most recent data.",
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
          enum: ["Survivor"],
          description:
            "Survivor: the member with the most recent data (highest raft index) is restarted once with --force-new-cluster, the others are replaced by learners. To recover from a backup, create a new EtcdCluster with spec.bootstrap.restore.",
        },
      },
      "x-kubernetes-validations": [
        { rule: "self == oldSelf", message: "spec is immutable: create another EtcdRestore" },
      ],
    },
    status: {
      type: "object",
      properties: {
        phase: { type: "string", enum: ["Pending", "Running", "Succeeded", "Failed"] },
        message: { type: "string", description: "Why it failed, or what it waits for." },
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
        clusterID: { type: "string", description: "The cluster ID after the recovery (hexadecimal)." },
        keptClaims: {
          type: "array",
          items: { type: "string" },
          description:
            "Claims of the replaced members, kept (labelled etcd.capstan.dev/kept-by-restore=<name>); delete them yourself once no longer needed.",
        },
        startTime: { type: "string", format: "date-time" },
        completionTime: { type: "string", format: "date-time" },
      },
    },
  },
};

/** The EtcdRestore CustomResourceDefinition. */
export function etcdRestoreCrd(): CustomResourceDefinitionObject {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${EtcdRestoreKind.plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: "Namespaced",
      names: {
        kind: EtcdRestoreKind.kind,
        plural: EtcdRestoreKind.plural,
        singular: "etcdrestore",
        listKind: "EtcdRestoreList",
        categories: ["capstan"],
      },
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: structuredClone(etcdRestoreSchema) },
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: "Cluster", type: "string", jsonPath: ".spec.clusterName" },
            { name: "Phase", type: "string", jsonPath: ".status.phase" },
            { name: "Survivor", type: "string", jsonPath: ".status.survivor" },
            { name: "Revision", type: "integer", jsonPath: ".status.revision" },
            { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
          ],
        },
      ],
    },
  };
}
