// @capstan/vault-operator: the VaultCluster API, the planner, the pure builders, the Vault client and the controller.
export * from "./api/vault-cluster.ts";
export * from "./api/vault-recovery.ts";
export * from "./api/vault-snapshot.ts";
export * from "./api/vault-snapshot-schedule.ts";
export * from "./desired/names.ts";
export * from "./desired/objects.ts";
export * from "./desired/tls.ts";
export * from "./plan/plan.ts";
export * from "./reconcile/controller.ts";
export * from "./reconcile/metrics.ts";
export * from "./reconcile/snapshot.ts";
export * from "./reconcile/snapshot-schedule.ts";
export * from "./vault/vault-client.ts";
