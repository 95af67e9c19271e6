// The operator's Vault ACL policies: its own (name and HCL), the snapshot Jobs' and the restore Job's, the token role
// the operator makes snapshot tokens against, and the command an admin runs to add a path to a policy written by
// an older operator. Pure text: the planner names the commands without importing the client.

/** The operator's policy: what it needs on a running cluster and nothing more. */
export const OPERATOR_POLICY_NAME = "capstan-vault-operator";

/** The path of autopilot's configuration (read: compare; update: write). */
export const AUTOPILOT_CONFIGURATION_PATH = "sys/storage/raft/autopilot/configuration";

/** The policy of a snapshot Job's token: read the raft snapshot, nothing else. */
export const SNAPSHOT_POLICY_NAME = "capstan-vault-snapshot";
/** The path a snapshot Job reads. */
export const SNAPSHOT_PATH = "sys/storage/raft/snapshot";
/** The HCL of {@link SNAPSHOT_POLICY_NAME}. */
export const SNAPSHOT_POLICY = `# Written by the capstan Vault operator: a VaultSnapshot Job's token reads one raft snapshot.
path "${SNAPSHOT_PATH}" {
  capabilities = ["read"]
}
`;
/** The token role the operator creates snapshot tokens against (orphans with the snapshot policy only). */
export const SNAPSHOT_ROLE = "capstan-vault-snapshot";
/** The role's path, which the operator's policy may update (create tokens) and nothing else of auth/token. */
export const SNAPSHOT_ROLE_CREATE_PATH = `auth/token/create/${SNAPSHOT_ROLE}`;
/** The body of auth/token/roles/<SNAPSHOT_ROLE>: orphan, not renewable, only the snapshot policy, at most 24 h. */
export const SNAPSHOT_ROLE_BODY = {
  allowed_policies: [SNAPSHOT_POLICY_NAME],
  disallowed_policies: ["root"],
  orphan: true,
  renewable: false,
  token_no_default_policy: true,
  token_explicit_max_ttl: "24h",
  token_type: "service",
} as const;

/** The policy of the restore Job's token, made in the temporary Vault a restore writes the snapshot into. */
export const RESTORE_POLICY_NAME = "capstan-vault-restore";
/** The HCL of {@link RESTORE_POLICY_NAME}: force-restore a snapshot, nothing else. */
export const RESTORE_POLICY = `# Written by the capstan Vault operator: the restore Job's token writes one raft snapshot.
path "sys/storage/raft/snapshot-force" {
  capabilities = ["update"]
}
`;

/** The HCL of {@link OPERATOR_POLICY_NAME}. */
export const OPERATOR_POLICY = `# Written by the capstan Vault operator: raft membership, autopilot, step-down, its own token, snapshot tokens.
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
path "${SNAPSHOT_ROLE_CREATE_PATH}" {
  capabilities = ["update"]
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

/**
 * The commands (vault CLI, a root or admin token in VAULT_TOKEN) that let an operator whose policy an older operator
 * wrote make snapshot tokens: the snapshot policy, the token role, and the role's create path in its own policy.
 */
export function snapshotAccessCommands(): string {
  const role = Object.entries(SNAPSHOT_ROLE_BODY)
    .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(",") : String(v)}`)
    .join(" ");
  return [
    `printf '${SNAPSHOT_POLICY.replace(/\n/g, "\\n")}' | vault policy write ${SNAPSHOT_POLICY_NAME} -`,
    `vault write auth/token/roles/${SNAPSHOT_ROLE} ${role}`,
    addToPolicyCommand(SNAPSHOT_ROLE_CREATE_PATH, ["update"]),
  ].join("; ");
}
