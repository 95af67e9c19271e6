// @capstan/vault-operator: the VaultCluster API, the planner, the pure builders, the Vault client and the controller.
export * from "./api/vault-cluster.ts";
