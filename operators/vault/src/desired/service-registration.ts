// Vault's own Kubernetes service registration (`service_registration "kubernetes"`): each Vault server labels its
// own pod (vault-active, vault-sealed, vault-initialized, vault-perf-standby, vault-version) the moment its state
// changes, so the `-active` Service follows the leader without the operator in the path. Pure builders of what it
// needs: the pods' ServiceAccount, a Role that lets them get and patch only this cluster's pods (by name), its
// RoleBinding, the projected token volume (mounted in the vault container only) and the downward-API environment;
// and the choice of the `-active` Service's selector while the pods of an older operator (labelled by the operator,
// vault.capstan.dev/state) are rolled onto registration.
import {
  type KubeObject,
  type RoleBindingObject,
  type RoleObject,
  type ServiceAccountObject,
  setControllerReference,
} from "@capstan/core";
import { type VaultCluster, VaultClusterKind } from "../api/vault-cluster.ts";
import { ordinalOf } from "../plan/ordinal.ts";
import { clusterLabels, clusterRef, podName, STATE_LABEL, selectorLabels } from "./names.ts";

/** Pod label Vault keeps: "true" on the active node, "false" on the others. */
export const VAULT_ACTIVE_LABEL = "vault-active";
/** Pod label Vault keeps: "true" while sealed. */
export const VAULT_SEALED_LABEL = "vault-sealed";
/** Pod label Vault keeps: "true" once initialized. Set with the others when registration starts: its presence shows
 *  that the pod's Vault reached the API server at least once. */
export const VAULT_INITIALIZED_LABEL = "vault-initialized";
/** Pod label Vault keeps: "true" on a performance standby (Vault Enterprise). */
export const VAULT_PERF_STANDBY_LABEL = "vault-perf-standby";
/** Pod label Vault keeps: the version it runs. */
export const VAULT_VERSION_LABEL = "vault-version";

/** Downward-API variables Vault's kubernetes registration reads (OpenBao reads the same names). */
export const POD_NAME_ENV = "VAULT_K8S_POD_NAME";
export const POD_NAMESPACE_ENV = "VAULT_K8S_NAMESPACE";

/** Where Vault's registration client reads the token and the API server's CA (fixed paths in Vault's code). */
export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";
/** The pod volume holding the token, the CA and the namespace (projected like the kubelet's own automount). */
export const API_ACCESS_VOLUME = "kube-api-access";
/**
 * The token's requested lifetime: the kubelet's own automount asks for 3607 s, and the API server, seeing that
 * value, keeps the token valid for a year (warning on use after an hour) while the kubelet rotates the file hourly;
 * Vault's client reads the file again when the API server answers 401 or 403.
 */
export const TOKEN_EXPIRATION_SECONDS = 3607;

/** The `service_registration` stanza of vault.json (pod name and namespace come from the environment). */
export const SERVICE_REGISTRATION_CONFIG = { kubernetes: {} };

/** The ServiceAccount, Role and RoleBinding the pods' registration uses: `<name>` (one per VaultCluster). */
export function registrationName(cluster: VaultCluster): string {
  return clusterRef(cluster).name;
}

function owned<T extends KubeObject>(cluster: VaultCluster, obj: T): T {
  setControllerReference(cluster, VaultClusterKind, obj);
  return obj;
}

function meta(cluster: VaultCluster) {
  return {
    name: registrationName(cluster),
    namespace: clusterRef(cluster).namespace,
    labels: clusterLabels(cluster),
  };
}

/**
 * The pods' ServiceAccount. It mounts no token by default (automountServiceAccountToken false): the pods mount one
 * into the vault container alone ({@link apiAccessVolume}), so the reloader sidecar holds none.
 */
export function serviceAccount(cluster: VaultCluster): ServiceAccountObject {
  return owned<ServiceAccountObject>(cluster, {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: meta(cluster),
    automountServiceAccountToken: false,
  });
}

/**
 * The pod names the Role grants: `<name>-0` .. `<name>-(n-1)`, n = the larger of spec.replicas and the highest
 * ordinal among `pods` + 1 (a pod being scaled in keeps labelling itself until it is gone: it steps down first, and
 * its vault-active must turn false).
 */
export function registrationPodNames(cluster: VaultCluster, pods: Iterable<string>): string[] {
  let n = cluster.spec.replicas;
  for (const p of pods) {
    const ordinal = ordinalOf(clusterRef(cluster).name, p);
    if (ordinal !== undefined) n = Math.max(n, ordinal + 1);
  }
  return Array.from({ length: n }, (_, i) => podName(cluster, i));
}

/**
 * The Role of the pods: get and patch on this cluster's pods only (resourceNames), what Vault's registration does
 * (GET its pod once, then JSON patches of its labels). No list, watch, create or delete; no other resource.
 */
export function registrationRole(cluster: VaultCluster, podNames: string[]): RoleObject {
  return owned<RoleObject>(cluster, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: meta(cluster),
    rules: [{ apiGroups: [""], resources: ["pods"], resourceNames: podNames, verbs: ["get", "patch"] }],
  });
}

/** Binds {@link registrationRole} to {@link serviceAccount}. */
export function registrationRoleBinding(cluster: VaultCluster): RoleBindingObject {
  const name = registrationName(cluster);
  return owned<RoleBindingObject>(cluster, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: meta(cluster),
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
    subjects: [{ kind: "ServiceAccount", name, namespace: clusterRef(cluster).namespace }],
  });
}

/** The environment Vault's registration reads: its pod's name and namespace (downward API). */
export function registrationEnv() {
  return [
    { name: POD_NAME_ENV, valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
    { name: POD_NAMESPACE_ENV, valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
  ];
}

/** The token, the API server's CA and the namespace, projected as the kubelet's automount would. */
export function apiAccessVolume() {
  return {
    name: API_ACCESS_VOLUME,
    projected: {
      defaultMode: 0o644,
      sources: [
        { serviceAccountToken: { path: "token", expirationSeconds: TOKEN_EXPIRATION_SECONDS } },
        { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
        {
          downwardAPI: {
            items: [{ path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } }],
          },
        },
      ],
    },
  };
}

/** The pod was built with Vault's registration (its vault container has {@link POD_NAME_ENV}). */
export function podRegisters(pod: {
  spec?: { containers?: { name: string; env?: { name: string }[] }[] };
}): boolean {
  const vault = pod.spec?.containers?.find((c) => c.name === "vault");
  return vault?.env?.some((e) => e.name === POD_NAME_ENV) === true;
}

/** Vault has labelled the pod at least once (its registration reached the API server). */
export function podRegistered(pod: { metadata?: { labels?: Record<string, string> } }): boolean {
  return pod.metadata?.labels?.[VAULT_INITIALIZED_LABEL] !== undefined;
}

/** Which label the `-active` Service selects the active pod by. */
export type ActiveSelector = "vault" | "operator";

/** The `-active` Service's selector for `by`: Vault's own label, or the operator's (pods of an older operator). */
export function activeSelector(cluster: VaultCluster, by: ActiveSelector): Record<string, string> {
  return {
    ...selectorLabels(cluster),
    ...(by === "vault" ? { [VAULT_ACTIVE_LABEL]: "true" } : { [STATE_LABEL]: "active" }),
  };
}

/** Which label the live `-active` Service selects by (undefined when there is none). */
export function liveActiveSelector(
  service: { spec?: { selector?: Record<string, string> } } | undefined,
): ActiveSelector | undefined {
  const selector = service?.spec?.selector;
  if (selector === undefined) return undefined;
  return selector[VAULT_ACTIVE_LABEL] === "true" ? "vault" : "operator";
}

type PodLike = {
  metadata?: { name?: string; labels?: Record<string, string>; deletionTimestamp?: unknown };
  spec?: { containers?: { name: string; env?: { name: string }[] }[] };
};

/**
 * The selector the `-active` Service should have. Vault's label once it is safe, and for good after that:
 * - a new Service (a new cluster, whose pods all register) or one that already selects Vault's label: Vault's;
 * - a Service of an older operator (the operator's label, vault.capstan.dev/state=active) stays on it while any pod
 *   still runs without registration (it would never carry vault-active, so the Service could point at nothing
 *   while it is active); the rolling restart that adds registration goes standbys first, the active node last
 *   after a step-down, and the operator's label follows each change meanwhile, as before;
 * - then it switches only when the pod the operator labelled active carries vault-active=true (Vault's registration
 *   works on it): the Service's endpoints move from that pod to that same pod, never through empty.
 * The switch is never undone (the Service itself is the record): were registration to break later, the operator
 * reports it (plan/registration.ts) instead of putting itself back in the path. While the operator may not make the
 * pods' ServiceAccount, Role and RoleBinding (`registration` false), pods are built without registration and a
 * Service still on the operator's label (or a new one) stays on it.
 */
export function chooseActiveSelector(
  live: ActiveSelector | undefined,
  pods: PodLike[],
  registration = true,
): ActiveSelector {
  if (live === "vault") return "vault";
  // The pods are built without registration while its objects are refused: a new Service takes the operator's label.
  if (!registration) return "operator";
  if (live === undefined) return "vault";
  const present = pods.filter((p) => p.metadata?.deletionTimestamp === undefined);
  if (present.length === 0 || !present.every(podRegisters)) return "operator";
  const active = present.filter((p) => p.metadata?.labels?.[STATE_LABEL] === "active");
  const ready = active.length === 1 && active[0]?.metadata?.labels?.[VAULT_ACTIVE_LABEL] === "true";
  return ready ? "vault" : "operator";
}
