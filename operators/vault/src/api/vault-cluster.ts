// VaultCluster (vault.capstan.dev/v1alpha1): the kind, its openAPIV3Schema (the one source: the types are derived
// from it) and CRD. The parts live by concept beside it and are re-exported from here: the spec's types
// (vault-cluster-spec.ts), their defaults (vault-cluster-defaults.ts), the spec's schema and CEL rules
// (vault-cluster-spec-schema.ts), and the status's schema and types (vault-cluster-status.ts).
import {
  type CustomResourceDefinitionObject,
  customResourceDefinition,
  defineKind,
  GO_DURATION_PATTERN,
  type KubeObject,
  type ObjectMeta,
} from "@capstan/core";
import * as Type from "typebox/type";
import { GROUP, VERSION } from "./group.ts";
import type { VaultClusterSpec } from "./vault-cluster-spec.ts";
import { vaultClusterSpecSchema } from "./vault-cluster-spec-schema.ts";
import { type VaultClusterStatus, vaultClusterStatusSchema } from "./vault-cluster-status.ts";

export * from "./vault-cluster-defaults.ts";
export * from "./vault-cluster-spec.ts";
export { AUTOPILOT_MIN_QUORUM_RULES } from "./vault-cluster-spec-schema.ts";
export {
  PHASES,
  type VaultAutopilotStatus,
  type VaultClusterPhase,
  type VaultClusterStatus,
  type VaultRaftPeer,
} from "./vault-cluster-status.ts";
export { GROUP, VERSION };

/** A VaultCluster object. */
export interface VaultCluster extends KubeObject {
  spec: VaultClusterSpec;
  status?: VaultClusterStatus;
}

/** The VaultCluster kind descriptor for clients, informers and controllers. */
export const VaultClusterKind = defineKind<VaultCluster>({
  group: GROUP,
  version: VERSION,
  kind: "VaultCluster",
  plural: "vaultclusters",
  namespaced: true,
});

/** A Go duration as time.ParseDuration (and CEL's duration()) reads it (from @capstan/core). */
export { GO_DURATION_PATTERN };

/** The openAPIV3Schema of VaultCluster. */
export const vaultClusterSchema = Type.Object(
  {
    apiVersion: Type.Optional(Type.String()),
    kind: Type.Optional(Type.String()),
    metadata: Type.Optional(Type.Unsafe<ObjectMeta>({ type: "object" })),
    spec: vaultClusterSpecSchema,
    status: Type.Optional(vaultClusterStatusSchema),
  },
  {
    description:
      "A Vault (or OpenBao) cluster on raft storage that the operator initializes, unseals, scales and upgrades.",
    "x-kubernetes-validations": [
      {
        // Pods are <name>-<ordinal>, reachable as <pod>.<name>-internal.<ns>.svc (DNS labels: 63 at most).
        rule: "self.metadata.name.size() <= 45 && self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",
        message:
          "metadata.name must be at most 45 characters of lowercase letters, digits and '-', starting with a letter (it names the pods and Services)",
      },
    ],
  },
);

/** The VaultCluster CustomResourceDefinition; `crds/vaultclusters.vault.capstan.dev.yaml` is generated from it. */
export function vaultClusterCrd(): CustomResourceDefinitionObject {
  return customResourceDefinition({
    kind: VaultClusterKind,
    singular: "vaultcluster",
    shortNames: ["vault"],
    schema: vaultClusterSchema,
    scale: true,
    printerColumns: [
      { name: "Replicas", type: "integer", jsonPath: ".spec.replicas" },
      { name: "Ready", type: "integer", jsonPath: ".status.readyReplicas" },
      { name: "Active", type: "string", jsonPath: ".status.active" },
      { name: "Sealed", type: "integer", jsonPath: ".status.sealedReplicas" },
      { name: "Version", type: "string", jsonPath: ".status.currentVersion" },
      { name: "Phase", type: "string", jsonPath: ".status.phase" },
      { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
    ],
  });
}
