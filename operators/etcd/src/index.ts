// @capstan/etcd-operator: the EtcdCluster API, the membership planner, the pure manifest builders, the etcd client
// and the controller.
export * from "./api/crds.ts";
export * from "./api/etcd-cluster.ts";
export * from "./desired/cluster-objects.ts";
export * from "./desired/member-pod.ts";
export * from "./desired/names.ts";
export * from "./etcd/etcd-client.ts";
export * from "./plan/etcd-version.ts";
export * from "./plan/plan.ts";
export * from "./reconcile/controller.ts";
export * from "./reconcile/metrics.ts";
