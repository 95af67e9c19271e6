// spec.network and spec.auth of an EtcdCluster: who may reach the members (a NetworkPolicy and its client
// selectors) and who may log in (etcd's root user, its password in a Secret), types and schemas.
import { stringMapSchema } from "@capstan/core";
import * as Type from "typebox/type";

/** The Secret key holding the root user's password. */
export const ROOT_PASSWORD_KEY = "password";
/** The etcd user the operator creates and authenticates as. */
export const ROOT_USER = "root";

const labelSelectorSchema = Type.Object(
  {
    matchLabels: Type.Optional(stringMapSchema("Labels to match.")),
    matchExpressions: Type.Optional(
      Type.Array(
        Type.Object({
          key: Type.String({ maxLength: 317 }),
          operator: Type.Enum(["In", "NotIn", "Exists", "DoesNotExist"], { type: "string" }),
          values: Type.Optional(Type.Array(Type.String({ maxLength: 63 }), { maxItems: 64 })),
        }),
        { maxItems: 16 },
      ),
    ),
  },
  { description: "A label selector (matchLabels, matchExpressions)." },
);

/** A Kubernetes label selector (matchLabels and matchExpressions). */
export type LabelSelectorSpec = Type.Static<typeof labelSelectorSchema>;

const clientSelectorSchema = Type.Object(
  { podSelector: Type.Optional(labelSelectorSchema), namespaceSelector: Type.Optional(labelSelectorSchema) },
  {
    "x-kubernetes-validations": [
      {
        rule: "has(self.podSelector) || has(self.namespaceSelector)",
        message: "network.clientSelectors: each entry needs a podSelector or a namespaceSelector",
      },
    ],
  },
);

/**
 * Pods allowed to reach the client port when spec.network.networkPolicy is on: pods with podSelector's labels (in
 * the cluster's namespace, or in the namespaces namespaceSelector picks); either selector may be omitted.
 */
export type EtcdClientSelector = Type.Static<typeof clientSelectorSchema>;

/** The schema of spec.network. */
export const networkSchema = Type.Object(
  {
    // The NetworkPolicy lets the peer port in only from members, the client port only from the operator, the
    // cluster's backup Jobs and clientSelectors.
    networkPolicy: Type.Optional(
      Type.Boolean({
        description:
          "Create a NetworkPolicy: peer port only from members; client port only from the operator, backup Jobs and clientSelectors. Needs a CNI that enforces NetworkPolicy.",
      }),
    ),
    clientSelectors: Type.Optional(
      Type.Array(clientSelectorSchema, {
        description: "Pods allowed to reach the client port (a podSelector, a namespaceSelector, or both).",
        maxItems: 32,
      }),
    ),
  },
  { description: "Network isolation of the members." },
);

/** Network isolation of the members. */
export type EtcdNetwork = Type.Static<typeof networkSchema>;

/** The schema of spec.auth. */
export const authSchema = Type.Object(
  {
    enabled: Type.Boolean({ default: false, description: "Authentication on (true) or off (false)." }),
    rootSecretRef: Type.Optional(
      Type.Object(
        {
          name: Type.String({
            minLength: 1,
            maxLength: 253,
            "x-kubernetes-validations": [
              {
                rule: "self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",
                message:
                  "auth.rootSecretRef.name must be a Secret name (lowercase letters, digits, '-' and '.')",
              },
            ],
          }),
        },
        {
          description:
            "Secret in the cluster's namespace with key password (the root user's password); read, never written. Default: <cluster>-root, made by the operator with a random password when missing and kept when the cluster is deleted. A cluster restored from a backup of an auth-enabled cluster needs the source's root Secret here.",
        },
      ),
    ),
  },
  {
    description:
      "etcd authentication: user root (role root) with the password of a Secret (key password), auth enabled once the cluster is available; enabled: false disables it again.",
  },
);

/**
 * etcd authentication (etcd's own users and roles, on top of any client TLS). The root user's password lives in a
 * Secret in the cluster's namespace, key `password`; the operator never writes it to a log, an argument or status.
 * `enabled: false` disables auth again; `rootSecretRef` defaults to `<cluster>-root`, created by the operator with a
 * random password when missing and NOT owned by the cluster (a restore of its backups needs it).
 */
export type EtcdAuth = Type.Static<typeof authSchema>;
