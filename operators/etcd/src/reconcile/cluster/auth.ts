// etcd authentication for one reconcile: the root password read from its Secret (made with a random password when
// spec.auth names none), what etcd says of its auth, and the auth steps. The password goes only to etcd: never to a
// log, an Event, status or an error message.
import { randomBytes } from "node:crypto";
import { type Client, isAlreadyExists, isNotFound, Secret, secretData } from "@capstan/core";
import { type EtcdCluster, ROOT_PASSWORD_KEY, ROOT_USER } from "../../api/etcd-cluster.ts";
import { rootSecret, rootSecretField, rootSecretName } from "../../desired/auth.ts";
import { clusterRef } from "../../desired/names.ts";
import type { EtcdClient, EtcdClientAuth } from "../../etcd/etcd-client.ts";
import { type AuthStep, missingRootSecret, type ObservedAuth } from "../../plan/auth.ts";

/** The root credentials for one reconcile, or why they are missing. */
export interface RootCredentials {
  /** What the etcd client authenticates with (absent: no usable Secret). */
  credentials?: EtcdClientAuth;
  /** spec.auth.enabled and the Secret is missing or has no password: Degraded naming the field. */
  problem?: { reason: string; field: string; message: string };
  /** Set when this reconcile created the root Secret (for an Event). */
  created?: string;
}

/**
 * Reads the root Secret. With spec.auth.enabled and no rootSecretRef, a missing `<cluster>-root` is created with a
 * random password (`create`: the cluster controller; readers such as the backup controller pass false), unless
 * etcd has auth on already (status.auth: Enabled): then Degraded RootSecretMissing, never a new password
 * (plan/auth.ts). With
 * spec.auth.enabled false a missing Secret is no problem: it is only needed if etcd still has auth on.
 */
export async function prepareAuth(
  client: Client,
  cluster: EtcdCluster,
  options: { create: boolean; signal?: AbortSignal },
): Promise<RootCredentials> {
  // No spec.auth: no Secret is read (an etcd with auth on then refuses the operator, which says so).
  if (cluster.spec.auth === undefined) return {};
  const { namespace } = clusterRef(cluster);
  const name = rootSecretName(cluster);
  const field = rootSecretField(cluster);
  const enabled = cluster.spec.auth?.enabled === true;
  const read = () =>
    client.get(Secret, name, namespace, options.signal).catch((err: unknown) => {
      if (isNotFound(err)) return undefined;
      throw err;
    });
  let secret = await read();
  let created: string | undefined;
  const missing =
    secret === undefined
      ? missingRootSecret({
          enabled,
          named: cluster.spec.auth?.rootSecretRef !== undefined,
          ...(cluster.status?.auth === undefined ? {} : { etcdAuth: cluster.status.auth }),
          secret: `${namespace}/${name}`,
          field,
        })
      : undefined;
  if (missing?.type === "Create" && options.create) {
    const password = randomBytes(24).toString("base64url");
    try {
      await client.create(
        Secret,
        rootSecret(cluster, password),
        options.signal === undefined ? {} : { signal: options.signal },
      );
      created = `created Secret ${namespace}/${name} with a random root password (kept when the EtcdCluster is deleted)`;
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
    secret = await read();
  }
  if (secret === undefined) {
    if (missing?.type === "Degraded") {
      const { reason, message } = missing;
      return { problem: { reason, field, message } };
    }
    if (!enabled) return {};
    return {
      problem: {
        reason: "RootSecretMissing",
        field,
        message: `${field}: Secret ${namespace}/${name} not found; create it with key ${ROOT_PASSWORD_KEY} (the etcd root user's password)`,
      },
    };
  }
  const password = secretData(secret)[ROOT_PASSWORD_KEY] ?? "";
  if (password === "") {
    if (!enabled) return {};
    return {
      problem: {
        reason: "RootSecretInvalid",
        field,
        message: `${field}: Secret ${namespace}/${name} has no key ${ROOT_PASSWORD_KEY} (or it is empty); put the etcd root user's password there`,
      },
    };
  }
  return {
    credentials: { username: ROOT_USER, password },
    ...(created === undefined ? {} : { created }),
  };
}

/**
 * What etcd says of its auth, asked only when spec.auth is set: on or off, and while it is off and wanted, whether
 * user root and its role exist. Undefined fields when etcd did not answer (the planner waits).
 */
export async function observeAuth(
  cluster: EtcdCluster,
  etcd: EtcdClient,
  signal?: AbortSignal,
): Promise<ObservedAuth> {
  const call = signal === undefined ? {} : { signal };
  const status = await etcd.authStatus(call).catch(() => undefined);
  if (status === undefined) return {};
  if (status.enabled || cluster.spec.auth?.enabled !== true) return { enabled: status.enabled };
  const roles = await etcd.userRoles(ROOT_USER, call).catch(() => null);
  if (roles === null) return { enabled: false };
  return { enabled: false, rootUser: roles !== undefined, rootRole: roles?.includes("root") === true };
}

/** Performs an auth step. Each is safe to repeat; the next observation decides the next one. */
export async function actAuth(
  step: AuthStep,
  etcd: EtcdClient,
  credentials: EtcdClientAuth | undefined,
  signal?: AbortSignal,
): Promise<{ done: true } | { done: false; reason: string; message: string }> {
  const call = signal === undefined ? {} : { signal };
  if (credentials === undefined) {
    return {
      done: false,
      reason: "NoRootPassword",
      message: `${step.message}: the root password is not known`,
    };
  }
  switch (step.type) {
    case "AddRootUser":
      await etcd.userAdd(ROOT_USER, credentials.password, call).catch((err: unknown) => {
        // Added by an earlier attempt whose answer was lost: EnableAuth sets the password again anyway.
        if (!(err instanceof Error && err.message.includes("user name already exists"))) throw err;
      });
      break;
    case "GrantRootRole":
      await etcd.userGrantRole(ROOT_USER, "root", call);
      break;
    case "EnableAuth":
      // The Secret's password, even when user root existed before with another one: after AuthEnable the
      // operator must be able to authenticate.
      await etcd.userChangePassword(ROOT_USER, credentials.password, call);
      await etcd.authEnable(call);
      break;
    case "DisableAuth":
      await etcd.authDisable(call);
      break;
  }
  return { done: true };
}
