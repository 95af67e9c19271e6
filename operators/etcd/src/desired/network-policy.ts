// Builds a cluster's NetworkPolicy (spec.network.networkPolicy): members' peer port only from members; the client
// port only from members, the operator's pods, the cluster's backup Jobs and spec.network.clientSelectors; the
// metrics port (probes, Prometheus) stays open. Only ingress is restricted. Enforced only where something implements
// NetworkPolicy (the local cluster: kube-router's policy controller beside the bridge plugin; kind: kindnet).
import { type NetworkPolicyObject, setControllerReference } from "@capstan/core";
import { type EtcdCluster, EtcdClusterKind, type LabelSelectorSpec } from "../api/etcd-cluster.ts";
import {
  CLIENT_PORT,
  CLUSTER_LABEL,
  clusterLabels,
  clusterRef,
  METRICS_PORT,
  PEER_PORT,
  selectorLabels,
} from "./names.ts";

/** Where the operator's pods run and their labels (the chart's selector labels). */
export interface OperatorPods {
  namespace: string;
  labels: Record<string, string>;
}

/** The operator's pod labels when the chart does not say them (POD_SELECTOR_LABELS unset): its default name. */
export const DEFAULT_OPERATOR_POD_LABELS: Readonly<Record<string, string>> = {
  "app.kubernetes.io/name": "etcd-operator",
};

/**
 * The operator's own pod labels from POD_SELECTOR_LABELS (a JSON object of strings, which the chart sets to its
 * selector labels, so a nameOverride or a second release is matched exactly); the default name label when unset.
 * Malformed JSON throws, naming the variable: a NetworkPolicy that locks the operator out is worse than not starting.
 */
export function podSelectorLabels(json: string | undefined): Record<string, string> {
  if (json === undefined || json.trim() === "") return { ...DEFAULT_OPERATOR_POD_LABELS };
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (err) {
    throw new Error(
      `POD_SELECTOR_LABELS must be a JSON object of label names to values: ${(err as Error).message}`,
    );
  }
  if (
    parsed === null ||
    typeof parsed !== "object" ||
    Array.isArray(parsed) ||
    Object.keys(parsed).length === 0 ||
    !Object.values(parsed).every((v) => typeof v === "string")
  ) {
    throw new Error(
      `POD_SELECTOR_LABELS must be a non-empty JSON object of label names to string values, got ${json}`,
    );
  }
  return parsed as Record<string, string>;
}

/** The NetworkPolicy of a cluster. */
export function networkPolicyName(cluster: EtcdCluster): string {
  return `${clusterRef(cluster).name}-etcd`;
}

type Peer = NonNullable<
  NonNullable<NonNullable<NetworkPolicyObject["spec"]>["ingress"]>[number]["from"]
>[number];

function selector(s: LabelSelectorSpec): LabelSelectorSpec {
  return {
    ...(s.matchLabels === undefined ? {} : { matchLabels: s.matchLabels }),
    ...(s.matchExpressions === undefined ? {} : { matchExpressions: s.matchExpressions }),
  };
}

/** The cluster's NetworkPolicy; `operator` unset: no rule for the operator (it runs outside the cluster). */
export function networkPolicy(cluster: EtcdCluster, operator?: OperatorPods): NetworkPolicyObject {
  const { name, namespace } = clusterRef(cluster);
  const members: Peer = { podSelector: { matchLabels: selectorLabels(cluster) } };
  const backups: Peer = {
    podSelector: { matchLabels: { "app.kubernetes.io/name": "etcd-backup", [CLUSTER_LABEL]: name } },
  };
  const operatorPeer: Peer[] =
    operator === undefined
      ? []
      : [
          {
            podSelector: { matchLabels: operator.labels },
            namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": operator.namespace } },
          },
        ];
  const clients: Peer[] = (cluster.spec.network?.clientSelectors ?? []).map((c) => ({
    ...(c.podSelector === undefined ? {} : { podSelector: selector(c.podSelector) }),
    ...(c.namespaceSelector === undefined ? {} : { namespaceSelector: selector(c.namespaceSelector) }),
  }));
  const policy: NetworkPolicyObject = {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: { name: networkPolicyName(cluster), namespace, labels: clusterLabels(cluster) },
    spec: {
      podSelector: { matchLabels: selectorLabels(cluster) },
      policyTypes: ["Ingress"],
      ingress: [
        { from: [members], ports: [{ protocol: "TCP", port: PEER_PORT }] },
        {
          from: [members, ...operatorPeer, backups, ...clients],
          ports: [{ protocol: "TCP", port: CLIENT_PORT }],
        },
        { ports: [{ protocol: "TCP", port: METRICS_PORT }] },
      ],
    },
  };
  setControllerReference(cluster, EtcdClusterKind, policy);
  return policy;
}
