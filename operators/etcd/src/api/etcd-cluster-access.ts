// spec.network and spec.auth of an EtcdCluster: who may reach the members (a NetworkPolicy and its client
// selectors) and who may log in (etcd's root user, its password in a Secret), types and schemas.
import { type JSONSchemaProps, stringMapSchema } from "@capstan/core";

/** Pods allowed to reach the client port when spec.network.networkPolicy is on (either selector may be omitted). */
export interface EtcdClientSelector {
  /** Pods with these labels (in the cluster's namespace, or in the namespaces namespaceSelector picks). */
  podSelector?: LabelSelectorSpec;
  /** Pods in namespaces with these labels. */
  namespaceSelector?: LabelSelectorSpec;
}

/** A Kubernetes label selector (matchLabels and matchExpressions). */
export interface LabelSelectorSpec {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

/** Network isolation of the members. */
export interface EtcdNetwork {
  /**
   * Create a NetworkPolicy: the peer port only from members, the client port only from the operator, the
   * cluster's backup Jobs and clientSelectors (needs a CNI that enforces NetworkPolicy).
   */
  networkPolicy?: boolean;
  clientSelectors?: EtcdClientSelector[];
}

/** The Secret key holding the root user's password. */
export const ROOT_PASSWORD_KEY = "password";
/** The etcd user the operator creates and authenticates as. */
export const ROOT_USER = "root";

/**
 * etcd authentication (etcd's own users and roles, on top of any client TLS). The root user's password lives in a
 * Secret in the cluster's namespace, key `password`; the operator never writes it to a log, an argument or status.
 */
export interface EtcdAuth {
  /** Auth on: the operator creates user root (role root) and enables auth; false disables it again. */
  enabled: boolean;
  /**
   * The Secret with the root password. Default: `<cluster>-root`, created by the operator with a random password
   * when missing and NOT owned by the cluster (deleting the cluster keeps it: a restore of its backups needs it).
   * A cluster restored from a backup of an auth-enabled cluster must name the source cluster's root Secret here.
   */
  rootSecretRef?: { name: string };
}

const labelSelectorSchema: JSONSchemaProps = {
  type: "object",
  description: "A label selector (matchLabels, matchExpressions).",
  properties: {
    matchLabels: stringMapSchema("Labels to match."),
    matchExpressions: {
      type: "array",
      maxItems: 16,
      items: {
        type: "object",
        required: ["key", "operator"],
        properties: {
          key: { type: "string", maxLength: 317 },
          operator: { type: "string", enum: ["In", "NotIn", "Exists", "DoesNotExist"] },
          values: { type: "array", items: { type: "string", maxLength: 63 }, maxItems: 64 },
        },
      },
    },
  },
};

/** The schema of spec.network. */
export const networkSchema: JSONSchemaProps = {
  type: "object",
  description: "Network isolation of the members.",
  properties: {
    networkPolicy: {
      type: "boolean",
      description:
        "Create a NetworkPolicy: peer port only from members; client port only from the operator, backup Jobs and clientSelectors. Needs a CNI that enforces NetworkPolicy.",
    },
    clientSelectors: {
      type: "array",
      description: "Pods allowed to reach the client port (a podSelector, a namespaceSelector, or both).",
      maxItems: 32,
      items: {
        type: "object",
        properties: { podSelector: labelSelectorSchema, namespaceSelector: labelSelectorSchema },
        "x-kubernetes-validations": [
          {
            rule: "has(self.podSelector) || has(self.namespaceSelector)",
            message: "network.clientSelectors: each entry needs a podSelector or a namespaceSelector",
          },
        ],
      },
    },
  },
};

/** The schema of spec.auth. */
export const authSchema: JSONSchemaProps = {
  type: "object",
  description:
    "etcd authentication: user root (role root) with the password of a Secret (key password), auth enabled once the cluster is available; enabled: false disables it again.",
  required: ["enabled"],
  properties: {
    enabled: { type: "boolean", default: false, description: "Authentication on (true) or off (false)." },
    rootSecretRef: {
      type: "object",
      description:
        "Secret in the cluster's namespace with key password (the root user's password); read, never written. Default: <cluster>-root, made by the operator with a random password when missing and kept when the cluster is deleted. A cluster restored from a backup of an auth-enabled cluster needs the source's root Secret here.",
      required: ["name"],
      properties: {
        name: {
          type: "string",
          minLength: 1,
          maxLength: 253,
          "x-kubernetes-validations": [
            {
              rule: "self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",
              message:
                "auth.rootSecretRef.name must be a Secret name (lowercase letters, digits, '-' and '.')",
            },
          ],
        },
      },
    },
  },
};
