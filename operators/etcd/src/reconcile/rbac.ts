// What the etcd operator may do in the cluster: its controller (whose for/owns kinds give the read rules) and the
// writes its reconciler makes. `capstan rbac` prints the rules; `capstan rbac --check` (and chart.test.ts) fails
// when charts/etcd-operator/templates/rbac.yaml grants less or more.
import type { OperatorAccess } from "@capstan/cli";
import {
  Job,
  NetworkPolicy,
  PersistentVolumeClaim,
  Pod,
  PodDisruptionBudget,
  Secret,
  Service,
} from "@capstan/core";
import { Registry } from "prom-client";
import { EtcdBackupKind } from "../api/backup.ts";
import { EtcdRestoreKind } from "../api/etcd-restore.ts";
import { CertificateKind } from "../desired/cert-manager.ts";
import { etcdBackupController } from "./backup/controller.ts";
import { DEFAULT_BACKUP_IMAGE, etcdClusterController } from "./cluster/controller.ts";
import { EtcdOperatorMetrics } from "./metrics.ts";
import { etcdBackupScheduleController } from "./schedule/controller.ts";

export const access: OperatorAccess = {
  controllers: () => [
    etcdClusterController({ metrics: new EtcdOperatorMetrics(new Registry()) }),
    etcdBackupController({ operatorImage: DEFAULT_BACKUP_IMAGE }),
    etcdBackupScheduleController(),
  ],
  rules: [
    {
      kind: Pod,
      verbs: ["create", "patch", "delete"],
      why: "a member's pod is created, patched to a new image (rolling upgrade), deleted when the member goes",
    },
    {
      kind: PersistentVolumeClaim,
      verbs: ["create", "delete", "patch"],
      why: "a member's data claim is created with it and deleted when the member goes; a restored seed's claim is marked done",
    },
    { kind: Service, verbs: ["create", "patch"], why: "the peer and client Services (server-side apply)" },
    {
      kind: PodDisruptionBudget,
      verbs: ["create", "patch"],
      why: "the PodDisruptionBudget (server-side apply)",
    },
    {
      kind: EtcdBackupKind,
      verbs: ["create", "patch", "delete"],
      why: "a schedule creates its backups and deletes them by retention; the deletionPolicy finalizer is added and removed (JSON patch)",
    },
    {
      kind: Job,
      verbs: ["create", "delete"],
      why: "a backup's snapshot is taken by a Job; a Job removes a deleted PVC backup's file",
    },
    {
      kind: EtcdRestoreKind,
      verbs: ["create", "patch"],
      why: "spec.recovery.automatic creates one EtcdRestore from the newest backup after quorum has been lost long enough; the recovery finalizer is added before a request's first write and removed once it has ended (JSON patch)",
    },
    {
      kind: EtcdRestoreKind,
      subresource: "status",
      verbs: ["get", "update", "patch"],
      why: "an EtcdRestore's status is written by its cluster's reconcile, which performs the recovery",
    },
    {
      kind: EtcdRestoreKind,
      subresource: "finalizers",
      verbs: ["update"],
      why: "the chart grants every CRD it ships a reconciled kind's rules (crdPermissions); the recovery finalizer is a metadata patch, not this subresource",
    },
    {
      kind: Pod,
      subresource: "log",
      verbs: ["get"],
      why: "a backup's revision and etcd version are read from its Job's verify step log",
    },
    {
      kind: Secret,
      verbs: ["get", "list", "create", "patch", "delete"],
      why: "TLS: the user's certificate Secrets are read; the CA and the certificates the operator issues are created, renewed and deleted with their member; a deleted S3 backup's object is deleted with the credentials (and CA) Secret it names; etcd auth: the root Secret is read, or created with a random password",
    },
    {
      kind: CertificateKind,
      verbs: ["get", "list", "create", "patch", "delete"],
      why: "spec.tls.<port>.certManager: the cluster's cert-manager Certificates are listed, created and kept as desired (server-side apply), and deleted with their member; plain reads, no watch (cert-manager may not be installed)",
    },
    {
      kind: NetworkPolicy,
      verbs: ["create", "patch", "delete"],
      why: "the cluster's NetworkPolicy (server-side apply; deleted when spec.network.networkPolicy is turned off)",
    },
  ],
};
