// @capstan/etcd-operator: the EtcdCluster, EtcdBackup and EtcdBackupSchedule APIs, the membership, backup and
// schedule planners, the pure manifest builders, the etcd client and the controllers.
export * from "./api/backup.ts";
export * from "./api/backup-schedule.ts";
export * from "./api/crds.ts";
export * from "./api/etcd-cluster.ts";
export * from "./api/etcd-restore.ts";
export * from "./desired/auth.ts";
export * from "./desired/backup-job.ts";
export * from "./desired/cert-manager.ts";
export * from "./desired/cluster-objects.ts";
export * from "./desired/member-pod.ts";
export * from "./desired/names.ts";
export * from "./desired/network-policy.ts";
export * from "./desired/tls.ts";
export * from "./desired/tls-rotation.ts";
export * from "./etcd/etcd-client.ts";
export * from "./plan/auth.ts";
export * from "./plan/backup.ts";
export * from "./plan/backup-member.ts";
export * from "./plan/etcd-version.ts";
export * from "./plan/plan.ts";
export * from "./reconcile/backup/controller.ts";
export * from "./reconcile/cluster/controller.ts";
export { type ClusterTLS, prepareTLS, readClientTLS, type TLSProblem } from "./reconcile/cluster/tls.ts";
export * from "./reconcile/metrics.ts";
export * from "./reconcile/schedule/controller.ts";
