// The operator's Vault ACL policy: its name, its HCL, and the command an admin runs to add a path to a policy
// written by an older operator. Pure text: the planner names the command without importing the client.

/** The operator's policy: what it needs on a running cluster and nothing more. */
export const OPERATOR_POLICY_NAME = "capstan-vault-operator";

/** The path of autopilot's configuration (read: compare; update: write). */
export const AUTOPILOT_CONFIGURATION_PATH = "sys/storage/raft/autopilot/configuration";

/** The HCL of {@link OPERATOR_POLICY_NAME}. */
export const OPERATOR_POLICY = `# Written by the capstan Vault operator: raft membership, autopilot, step-down, its own token.
path "sys/storage/raft/configuration" {
  capabilities = ["read"]
}
path "sys/storage/raft/remove-peer" {
  capabilities = ["update"]
}
path "sys/storage/raft/autopilot/state" {
  capabilities = ["read"]
}
path "${AUTOPILOT_CONFIGURATION_PATH}" {
  capabilities = ["read", "update"]
}
path "sys/step-down" {
  capabilities = ["update", "sudo"]
}
path "auth/token/renew-self" {
  capabilities = ["update"]
}
path "auth/token/lookup-self" {
  capabilities = ["read"]
}
`;

/**
 * The shell command that adds `path` with `capabilities` to the operator's policy as it is in Vault (keeping
 * whatever else it holds), run with the vault CLI and a root or admin token (VAULT_ADDR, VAULT_TOKEN).
 */
export function addToPolicyCommand(path: string, capabilities: readonly string[]): string {
  const block = `path "${path}" {\\n  capabilities = [${capabilities.map((c) => `"${c}"`).join(", ")}]\\n}\\n`;
  return `{ vault policy read ${OPERATOR_POLICY_NAME}; printf '\\n${block}'; } | vault policy write ${OPERATOR_POLICY_NAME} -`;
}
