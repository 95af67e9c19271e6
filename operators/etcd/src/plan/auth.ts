// The etcd authentication planner: from spec.auth and what etcd answered, the one auth step to take (user root,
// its role, AuthEnable; or AuthDisable), and the gate that stops every other step while etcd refuses the operator's
// credentials. Pure: the reconciler re-observes after each step, so an interrupted sequence resumes where it stopped.
import type { EtcdClusterSpec } from "../api/etcd-cluster.ts";

/** What the operator knows of etcd's authentication. */
export interface ObservedAuth {
  /** etcd's answer: auth on or off (undefined: not asked, spec.auth is unset, or etcd did not answer). */
  enabled?: boolean;
  /** While auth is off: user root exists (undefined: not read). */
  rootUser?: boolean;
  /** While auth is off: user root has role root. */
  rootRole?: boolean;
  /** etcd refused the operator: it has no credentials (auth is on) or its password is wrong. */
  failure?: { reason: "NoCredentials" | "WrongPassword"; message: string };
}

/** The auth steps, one at a time, each re-checked by the next observation. */
export type AuthStep =
  /** Auth is off and wanted: user root with the root Secret's password. */
  | { type: "AddRootUser"; message: string }
  /** Auth is off and wanted: role root for user root (AuthEnable needs it). */
  | { type: "GrantRootRole"; message: string }
  /** Auth is off and wanted, root is ready: set root's password to the Secret's, then AuthEnable. */
  | { type: "EnableAuth"; message: string }
  /** Auth is on and spec.auth.enabled is false: AuthDisable, as root. */
  | { type: "DisableAuth"; message: string };

/** The Degraded step naming spec.auth.rootSecretRef when etcd refuses the operator's credentials. */
export interface AuthFailed {
  type: "Degraded";
  reason: "AuthFailed";
  field: "spec.auth.rootSecretRef";
  message: string;
}

/**
 * Degraded when etcd has auth on and refuses the operator (no credentials, or a wrong password): nothing else can
 * be observed or done. The usual cause is a cluster restored from a backup of an auth-enabled cluster, which keeps
 * the source's users: spec.auth.rootSecretRef must name the source's root Secret.
 */
export function authFailure(observed: { auth?: ObservedAuth }): AuthFailed | undefined {
  const failure = observed.auth?.failure;
  if (failure === undefined) return undefined;
  const why =
    failure.reason === "WrongPassword"
      ? "etcd rejects the root password of the root Secret"
      : "etcd has authentication on and the operator has no root password";
  return {
    type: "Degraded",
    reason: "AuthFailed",
    field: "spec.auth.rootSecretRef",
    message: `spec.auth.rootSecretRef: ${why} (${failure.message}); a cluster restored from a backup of an auth-enabled cluster keeps that cluster's users: name its root Secret (key password) in spec.auth.rootSecretRef`,
  };
}

/**
 * The next auth step, undefined when etcd's auth matches spec.auth, or Wait when etcd did not answer about it.
 * Called only on a healthy cluster. Unset spec.auth leaves etcd's auth as it is; enabled: false turns it off.
 */
export function planAuth(
  spec: EtcdClusterSpec,
  auth: ObservedAuth | undefined,
): AuthStep | { type: "Wait"; reason: string; message: string } | undefined {
  if (spec.auth === undefined) return undefined;
  if (auth?.enabled === undefined) {
    return { type: "Wait", reason: "AuthUnknown", message: "etcd did not say whether authentication is on" };
  }
  if (spec.auth.enabled && !auth.enabled) {
    if (auth.rootUser === undefined || auth.rootRole === undefined) {
      return { type: "Wait", reason: "AuthUnknown", message: "etcd did not answer about its user root" };
    }
    if (!auth.rootUser) {
      return { type: "AddRootUser", message: "adding etcd user root (the root Secret's password)" };
    }
    if (!auth.rootRole) return { type: "GrantRootRole", message: "granting role root to etcd user root" };
    return {
      type: "EnableAuth",
      message: "enabling etcd authentication (user root, password from the root Secret)",
    };
  }
  if (!spec.auth.enabled && auth.enabled) {
    return { type: "DisableAuth", message: "disabling etcd authentication (spec.auth.enabled is false)" };
  }
  return undefined;
}

/** What decides whether a missing root Secret may be made (reconcile/cluster/auth.ts reads it). */
export interface MissingRootSecret {
  /** spec.auth.enabled. */
  enabled: boolean;
  /** spec.auth.rootSecretRef names the Secret (the operator never makes a named one). */
  named: boolean;
  /** etcd's auth as it last answered (status.auth). */
  etcdAuth?: "Enabled" | "Disabled";
  /** `<namespace>/<name>` of the Secret. */
  secret: string;
  /** The field a problem is reported on. */
  field: string;
}

/**
 * When the root Secret is missing: Create (a new random password) only for the operator's own Secret, wanted, and
 * while etcd has not said its auth is on: once etcd has auth on it keeps the old password, so a new one would lock
 * the operator out for good (and a Secret restored from a backup would then be skipped, its name being taken).
 * Else Degraded RootSecretMissing naming the Secret and the recovery; undefined when auth is not wanted.
 */
export function missingRootSecret(
  o: MissingRootSecret,
):
  | { type: "Create" }
  | { type: "Degraded"; reason: "RootSecretMissing"; field: string; message: string }
  | undefined {
  if (!o.enabled) return undefined;
  if (!o.named && o.etcdAuth !== "Enabled") return { type: "Create" };
  const message = o.named
    ? `${o.field}: Secret ${o.secret} not found; create it with key password (the etcd root user's password)`
    : `${o.field}: Secret ${o.secret}, made by the operator, not found while etcd has authentication on (status.auth: Enabled): no new root password is made (etcd keeps the old one and would refuse it); restore the Secret (key password) from your backup, or reset the root password with etcdctl and put it there (docs/operators/etcd.md, "The root Secret is lost")`;
  return { type: "Degraded", reason: "RootSecretMissing", field: o.field, message };
}
