// @capstan/etcd-operator: the EtcdCluster API, the membership planner and the pure manifest builders.
export * from "./api/crd-yaml.ts";
export * from "./api/etcd-cluster.ts";
export * from "./desired/cluster-objects.ts";
export * from "./desired/member-pod.ts";
export * from "./desired/names.ts";
export * from "./plan/etcd-version.ts";
export * from "./plan/plan.ts";
