// What the Vault operator may do in the cluster: its controller (whose for/owns kinds give the read rules), the
// Secrets it reads without owning, and the writes its reconciler makes. `capstan rbac` prints the rules;
// `capstan rbac --check` (and chart.test.ts) fails when charts/vault-operator/templates/rbac.yaml grants less or more.
import type { OperatorAccess } from "@capstan/cli";
import {
  ConfigMap,
  Job,
  PersistentVolumeClaim,
  Pod,
  PodDisruptionBudget,
  Role,
  RoleBinding,
  Secret,
  Service,
  ServiceAccount,
} from "@capstan/core";
import { Registry } from "prom-client";
import { VaultRecoveryKind } from "../api/vault-recovery.ts";
import { VaultSnapshotKind } from "../api/vault-snapshot.ts";
import { VaultSnapshotScheduleKind } from "../api/vault-snapshot-schedule.ts";
import { vaultClusterController } from "./controller.ts";
import { KeysKeeper } from "./keys-keeper.ts";
import { VaultOperatorMetrics } from "./metrics.ts";
import { vaultSnapshotController } from "./snapshot.ts";
import { vaultSnapshotScheduleController } from "./snapshot-schedule.ts";

/** Only the controller's kinds are read here: nothing reconciles, so its keeper never writes. */
const neverWrites = () => Promise.reject(new Error("the RBAC listing writes nothing"));

export const access: OperatorAccess = {
  controllers: () => [
    vaultClusterController({
      metrics: new VaultOperatorMetrics(new Registry()),
      keys: new KeysKeeper({ client: { patch: neverWrites, create: neverWrites } }),
    }),
    vaultSnapshotController({ operatorImage: "unused" }),
    vaultSnapshotScheduleController(),
  ],
  rules: [
    {
      kind: VaultRecoveryKind,
      verbs: ["patch"],
      why: "the recovery finalizer is added before a VaultRecovery's first write to its cluster and removed once it has ended (JSON patch)",
    },
    {
      kind: VaultRecoveryKind,
      subresource: "status",
      verbs: ["get", "update", "patch"],
      why: "a VaultRecovery's status is written by its cluster's reconcile, which performs the recovery",
    },
    {
      kind: VaultRecoveryKind,
      subresource: "finalizers",
      verbs: ["update"],
      why: "the chart grants every CRD it ships a reconciled kind's rules (crdPermissions); the recovery finalizer is a metadata patch, not this subresource",
    },
    {
      kind: VaultSnapshotKind,
      subresource: "status",
      verbs: ["get", "update", "patch"],
      why: "a VaultSnapshot's phase, conditions and results",
    },
    {
      kind: VaultSnapshotKind,
      subresource: "finalizers",
      verbs: ["update"],
      why: "the chart grants every CRD it ships a reconciled kind's rules (crdPermissions); the deletionPolicy finalizer is a metadata patch, not this subresource",
    },
    {
      kind: VaultSnapshotKind,
      verbs: ["create", "patch", "delete"],
      why: "a VaultSnapshotSchedule creates a VaultSnapshot for each scheduled time and deletes those beyond its retention; the deletionPolicy finalizer is added and removed (JSON patch)",
    },
    {
      kind: VaultSnapshotScheduleKind,
      subresource: "status",
      verbs: ["get", "update", "patch"],
      why: "a VaultSnapshotSchedule's last and next scheduled times, last success and conditions",
    },
    {
      kind: VaultSnapshotScheduleKind,
      subresource: "finalizers",
      verbs: ["update"],
      why: "the chart grants every CRD it ships a reconciled kind's rules (crdPermissions); no finalizer is set on a VaultSnapshotSchedule",
    },
    {
      kind: Job,
      verbs: ["create", "delete"],
      why: "a VaultSnapshot's Job takes and stores the snapshot; a Job removes a deleted PVC snapshot's file; a restore's Job writes it into a new cluster and is deleted once the restore is confirmed",
    },
    {
      kind: Pod,
      verbs: ["create", "patch", "delete"],
      why: "a server's pod is created, labelled (active/standby), annotated (certificate), patched to a new image, deleted on scale-in; get and patch are also what each cluster's registration Role grants its pods (Kubernetes refuses a Role granting more than its creator holds)",
    },
    {
      kind: PersistentVolumeClaim,
      verbs: ["create", "patch", "delete"],
      why: "a server's data claim is created with it, marked when init starts and by a recovery (annotations), deleted on scale-in and, after a recovery, for a server that joins fresh",
    },
    { kind: Service, verbs: ["create", "patch"], why: "the cluster's Services (server-side apply)" },
    { kind: ConfigMap, verbs: ["create", "patch"], why: "the servers' configuration (server-side apply)" },
    ...[ServiceAccount, Role, RoleBinding].map((kind) => ({
      kind,
      verbs: ["create", "patch"] as const,
      why: "each cluster's ServiceAccount, Role and RoleBinding for Vault's service registration, which lets the pods label themselves (server-side apply; deleted with the cluster by its owner reference)",
    })),
    {
      kind: PodDisruptionBudget,
      verbs: ["create", "patch"],
      why: "the PodDisruptionBudget (server-side apply)",
    },
    {
      kind: Secret,
      verbs: ["get", "list", "watch"],
      why: "the unseal keys, CA and server certificates and a user's tls.secretName are read through the cache",
    },
    {
      kind: Secret,
      verbs: ["create", "patch", "delete"],
      why: "the unseal keys and the operator token, the CA and server certificates are created and updated; a snapshot or restore Job's token Secret is created, and deleted when its Job ends, and a restore's temporary keys once it is confirmed",
    },
  ],
};
