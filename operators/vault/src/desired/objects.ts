// Pure builders of everything a VaultCluster owns: pods (restricted Pod Security, certificate reloader sidecar,
// health probes), data claims, the three Services, the Vault JSON config, the PodDisruptionBudget and the Secrets.
import {
  type ConfigMapObject,
  type KubeObject,
  type PersistentVolumeClaimObject,
  type PodDisruptionBudgetObject,
  type PodObject,
  quorum,
  resourceRequirements,
  restrictedContainerSecurityContext,
  restrictedPodSecurityContext,
  retainedClaim,
  type SecretObject,
  type ServiceObject,
  setControllerReference,
  spreadOverNodes,
  stableHash,
} from "@capstan/core";
import {
  DEFAULT_ANTI_AFFINITY,
  DEFAULT_TOPOLOGY_KEY,
  OPERATOR_OWNED_CONFIG_KEYS,
  type VaultCluster,
  VaultClusterKind,
} from "../api/vault-cluster.ts";
import { vaultImage } from "../plan/plan.ts";
import {
  API_PORT,
  activeServiceName,
  CLAIM_UID_LABEL,
  CLUSTER_PORT,
  claimName,
  clientServiceName,
  clusterLabels,
  clusterRef,
  configMapName,
  internalServiceName,
  keysSecretName,
  podApiAddr,
  podClusterAddr,
  selectorLabels,
  tlsSecretName,
} from "./names.ts";
import {
  type ActiveSelector,
  API_ACCESS_VOLUME,
  activeSelector,
  apiAccessVolume,
  registrationEnv,
  registrationName,
  SERVICE_ACCOUNT_DIR,
  SERVICE_REGISTRATION_CONFIG,
} from "./service-registration.ts";

type PodSpec = NonNullable<PodObject["spec"]>;
type Affinity = NonNullable<PodSpec["affinity"]>;

/** Where the raft data lives in the pod. */
export const DATA_DIR = "/vault/data";
/** Where vault.json is mounted. */
export const CONFIG_DIR = "/vault/config";
/** Where the listener certificate (tls.crt, tls.key, ca.crt) is mounted. */
export const TLS_DIR = "/vault/tls";
/** The pod volume of the listener certificate: the Secret it mounts is what the pod serves (see mountedTlsSecret). */
export const TLS_VOLUME = "tls";
/** UID the vault user has in the image (and the reloader runs as, to be allowed to signal vault). */
export const VAULT_UID = 100;
/** GID owning the mounted volumes. */
export const VAULT_GID = 1000;
/** Default image of the certificate reloader sidecar (operator flag --reloader-image). */
export const DEFAULT_RELOADER_IMAGE = "docker.io/library/busybox:1.37";
/** Annotation on a pod: the {@link podTemplateHash} it was built from. */
export const POD_TEMPLATE_HASH_ANNOTATION = "vault.capstan.dev/pod-template-hash";
/** Requests of the vault container when spec.podTemplate.resources is unset (never BestEffort). */
export const DEFAULT_RESOURCES = { requests: { cpu: "100m", memory: "128Mi" } };

/** Readiness: 200 only when unsealed (active or standby); sealed 503 and uninitialized 501 are not ready. */
export const READINESS_PATH = "/v1/sys/health?standbyok=true&perfstandbyok=true";
/** Liveness: a sealed or uninitialized vault is alive (204); only a vault that does not answer is restarted. */
export const LIVENESS_PATH = "/v1/sys/health?standbyok=true&perfstandbyok=true&sealedcode=204&uninitcode=204";

/** Settings of the operator process that shape the pods. */
export interface PodSettings {
  /** Image of the certificate reloader sidecar. */
  reloaderImage: string;
  /**
   * Vault's Kubernetes service registration (default true): its ServiceAccount, token and environment. false while
   * the operator may not make the pods' ServiceAccount, Role and RoleBinding (its own RBAC lags its version): the
   * pods are then built as before, so they are never restarted onto a ServiceAccount that does not exist.
   */
  serviceRegistration?: boolean;
}

function owned<T extends KubeObject>(cluster: VaultCluster, obj: T): T {
  setControllerReference(cluster, VaultClusterKind, obj);
  return obj;
}

function meta(cluster: VaultCluster, name: string, labels = clusterLabels(cluster)) {
  return { name, namespace: clusterRef(cluster).namespace, labels };
}

/**
 * The Vault server configuration (vault.json): spec.config merged under what the operator owns (the listener with
 * the mounted certificate, raft storage in /vault/data, disable_mlock). node_id, api_addr and cluster_addr are
 * per pod and come from VAULT_RAFT_NODE_ID, VAULT_API_ADDR and VAULT_CLUSTER_ADDR. Throws on an owned key. The
 * Kubernetes service registration is in a file of its own ({@link REGISTRATION_CONFIG_FILE}).
 */
export function vaultConfig(cluster: VaultCluster): Record<string, unknown> {
  const extra = cluster.spec.config ?? {};
  const owned = Object.keys(extra).filter((k) => OPERATOR_OWNED_CONFIG_KEYS.includes(k));
  if (owned.length > 0) {
    throw new Error(
      `VaultCluster ${clusterRef(cluster).name}: spec.config must not set ${owned.join(", ")} (set by the operator)`,
    );
  }
  return {
    ui: false,
    ...extra,
    disable_mlock: true,
    listener: [
      {
        tcp: {
          address: `0.0.0.0:${API_PORT}`,
          cluster_address: `0.0.0.0:${CLUSTER_PORT}`,
          tls_cert_file: `${TLS_DIR}/tls.crt`,
          tls_key_file: `${TLS_DIR}/tls.key`,
          tls_min_version: "tls12",
        },
      },
    ],
    storage: { raft: { path: DATA_DIR } },
  };
}

/**
 * The second configuration file, with Vault's Kubernetes service registration: each server labels its own pod
 * (vault-active, vault-sealed, ...), so the -active Service follows the leader without the operator
 * (service-registration.ts). A file of its own, which only the pods built for it load (a second -config): a pod of an
 * older operator lacks the environment and the token the stanza needs (Vault would exit at start), and its container
 * may restart on the shared ConfigMap before the rolling restart reaches it.
 */
export const REGISTRATION_CONFIG_FILE = "service-registration.json";

/** The ConfigMap `<name>-config` with vault.json and {@link REGISTRATION_CONFIG_FILE}. */
export function configMap(cluster: VaultCluster): ConfigMapObject {
  return owned<ConfigMapObject>(cluster, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: meta(cluster, configMapName(cluster)),
    data: {
      "vault.json": `${JSON.stringify(vaultConfig(cluster), null, 2)}\n`,
      [REGISTRATION_CONFIG_FILE]: `${JSON.stringify({ service_registration: SERVICE_REGISTRATION_CONFIG }, null, 2)}\n`,
    },
  });
}

/**
 * A short hash of what shapes a pod besides its image: spec.podTemplate, spec.config, the TLS Secret's name and the
 * reloader image. A pod whose annotation differs is restarted on its data, one at a time. The version is not in
 * it: a version change is a rolling upgrade made in place.
 */
export function podTemplateHash(cluster: VaultCluster, settings: PodSettings): string {
  return stableHash({
    podTemplate: cluster.spec.podTemplate ?? {},
    config: cluster.spec.config ?? {},
    tlsSecret: tlsSecretName(cluster),
    reloaderImage: settings.reloaderImage,
    // What the operator itself puts in a pod: a newer operator that changes it rolls the pods one at a time. Without
    // service registration a pod is what builder 1 made, and keeps its hash: no restart for nothing.
    builder:
      settings.serviceRegistration === false ? POD_BUILDER_VERSION_WITHOUT_REGISTRATION : POD_BUILDER_VERSION,
    reloader: RELOADER_SCRIPT,
  });
}

/**
 * Bumped when vaultPod changes in a way running pods must pick up (probes, environment, mounts). 2: Vault's
 * Kubernetes service registration (its ServiceAccount, token volume and environment).
 */
export const POD_BUILDER_VERSION = 2;
/** The builder version of a pod made without service registration (PodSettings.serviceRegistration false). */
export const POD_BUILDER_VERSION_WITHOUT_REGISTRATION = 1;

/**
 * The reloader's script: SIGHUP to vault when the mounted certificate or key changes (checked every 10 s). Plain
 * sh and /proc (the shared process namespace), no pkill: small busybox builds lack it.
 */
export const RELOADER_SCRIPT = `last=""
while true; do
  cur="$(cat ${TLS_DIR}/tls.crt ${TLS_DIR}/tls.key 2>/dev/null | md5sum)"
  if [ -n "$last" ] && [ "$cur" != "$last" ]; then
    for p in /proc/[0-9]*; do
      if [ "$(cat "$p/comm" 2>/dev/null)" = vault ] && kill -HUP "\${p#/proc/}"; then
        echo "certificate changed: sent SIGHUP to vault (pid \${p#/proc/})"
      fi
    done
  fi
  last="$cur"
  sleep 10
done
`;

/** The pod `<name>-<ordinal>`; `image` defaults to spec's (a pod not yet upgraded keeps its own). */
export function vaultPod(
  cluster: VaultCluster,
  pod: string,
  settings: PodSettings,
  image?: string,
): PodObject {
  const template = cluster.spec.podTemplate ?? {};
  const registers = settings.serviceRegistration !== false;
  const probe = (path: string, periodSeconds: number, failureThreshold: number) => ({
    httpGet: { path, port: "https", scheme: "HTTPS" },
    periodSeconds,
    timeoutSeconds: 3,
    failureThreshold,
  });
  const spec: PodSpec = {
    hostname: pod,
    subdomain: internalServiceName(cluster),
    shareProcessNamespace: true,
    restartPolicy: "Always",
    enableServiceLinks: false,
    // The registration's ServiceAccount (it may get and patch this cluster's pods only); its token is mounted into
    // the vault container alone (the API access volume), not into every container as automount would.
    ...(registers ? { serviceAccountName: registrationName(cluster) } : {}),
    automountServiceAccountToken: false,
    terminationGracePeriodSeconds: 30,
    securityContext: restrictedPodSecurityContext(VAULT_UID, VAULT_GID),
    containers: [
      {
        name: "vault",
        image: image ?? vaultImage(cluster.spec),
        command: ["/bin/vault"],
        args: [
          "server",
          `-config=${CONFIG_DIR}/vault.json`,
          ...(registers ? [`-config=${CONFIG_DIR}/${REGISTRATION_CONFIG_FILE}`] : []),
        ],
        env: [
          { name: "VAULT_RAFT_NODE_ID", value: pod },
          { name: "VAULT_API_ADDR", value: podApiAddr(cluster, pod) },
          { name: "VAULT_CLUSTER_ADDR", value: podClusterAddr(cluster, pod) },
          // For `vault` CLI calls inside the pod (kubectl exec).
          { name: "VAULT_ADDR", value: `https://127.0.0.1:${API_PORT}` },
          { name: "VAULT_CACERT", value: `${TLS_DIR}/ca.crt` },
          { name: "HOME", value: "/tmp" },
          ...(registers ? registrationEnv() : []),
        ],
        ports: [
          { name: "https", containerPort: API_PORT },
          { name: "cluster", containerPort: CLUSTER_PORT },
        ],
        resources: resourceRequirements(template.resources ?? DEFAULT_RESOURCES),
        terminationMessagePolicy: "FallbackToLogsOnError",
        startupProbe: probe(LIVENESS_PATH, 2, 60),
        livenessProbe: probe(LIVENESS_PATH, 10, 6),
        readinessProbe: probe(READINESS_PATH, 3, 2),
        securityContext: restrictedContainerSecurityContext(),
        volumeMounts: [
          { name: "data", mountPath: DATA_DIR },
          { name: "config", mountPath: CONFIG_DIR, readOnly: true },
          { name: TLS_VOLUME, mountPath: TLS_DIR, readOnly: true },
          { name: "tmp", mountPath: "/tmp" },
          ...(registers ? [{ name: API_ACCESS_VOLUME, mountPath: SERVICE_ACCOUNT_DIR, readOnly: true }] : []),
        ],
      },
      {
        name: "reloader",
        image: settings.reloaderImage,
        command: ["sh", "-c", RELOADER_SCRIPT],
        resources: { requests: { cpu: "5m", memory: "8Mi" }, limits: { memory: "32Mi" } },
        securityContext: restrictedContainerSecurityContext(VAULT_UID),
        volumeMounts: [{ name: TLS_VOLUME, mountPath: TLS_DIR, readOnly: true }],
      },
    ],
    volumes: [
      { name: "data", persistentVolumeClaim: { claimName: claimName(pod) } },
      { name: "config", configMap: { name: configMapName(cluster) } },
      {
        name: TLS_VOLUME,
        secret: {
          secretName: tlsSecretName(cluster),
          defaultMode: 0o440,
          items: ["tls.crt", "tls.key", "ca.crt"].map((key) => ({ key, path: key })),
        },
      },
      { name: "tmp", emptyDir: {} },
      ...(registers ? [apiAccessVolume()] : []),
    ],
    affinity:
      (template.affinity as Affinity | undefined) ??
      spreadOverNodes(
        selectorLabels(cluster),
        template.antiAffinity ?? DEFAULT_ANTI_AFFINITY,
        template.topologyKey ?? DEFAULT_TOPOLOGY_KEY,
      ),
    ...(template.tolerations === undefined ? {} : { tolerations: template.tolerations }),
    ...(template.nodeSelector === undefined ? {} : { nodeSelector: template.nodeSelector }),
  };
  return owned<PodObject>(cluster, {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      ...meta(cluster, pod, {
        ...template.labels,
        ...clusterLabels(cluster),
        "app.kubernetes.io/component": "server",
      }),
      annotations: {
        ...template.annotations,
        [POD_TEMPLATE_HASH_ANNOTATION]: podTemplateHash(cluster, settings),
      },
    },
    spec,
  });
}

/**
 * The Secret a pod mounts its listener certificate from (its TLS_VOLUME), or undefined. A pod's volumes never change,
 * so this is a durable record, written when the pod was made, of the certificate source it serves: after a switch of
 * spec.tls.secretName the operator reads it to keep trusting the CA of the pods not yet restarted.
 */
export function mountedTlsSecret(pod: PodObject): string | undefined {
  return pod.spec?.volumes?.find((v) => v.name === TLS_VOLUME)?.secret?.secretName;
}

/**
 * The data claim `data-<pod>`: with storage.whenDeleted Retain (the default) it has no owner reference, so deleting
 * the VaultCluster never deletes the raft data; with Delete it is garbage-collected with the cluster.
 */
export function dataClaim(cluster: VaultCluster, pod: string): PersistentVolumeClaimObject {
  const { storage } = cluster.spec;
  const claim: PersistentVolumeClaimObject = {
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    metadata: meta(cluster, claimName(pod), {
      ...clusterLabels(cluster),
      "app.kubernetes.io/component": "server",
    }),
    spec: {
      accessModes: ["ReadWriteOnce"],
      resources: { requests: { storage: storage.size ?? "1Gi" } },
      ...(storage.storageClassName === undefined ? {} : { storageClassName: storage.storageClassName }),
    },
  };
  return retainedClaim(cluster, VaultClusterKind, claim, storage.whenDeleted ?? "Retain", CLAIM_UID_LABEL);
}

/** The client Service `<name>`: every ready (unsealed) pod. */
export function clientService(cluster: VaultCluster): ServiceObject {
  return owned<ServiceObject>(cluster, {
    apiVersion: "v1",
    kind: "Service",
    metadata: meta(cluster, clientServiceName(cluster)),
    spec: {
      type: "ClusterIP",
      selector: selectorLabels(cluster),
      ports: [{ name: "https", port: API_PORT, targetPort: "https" }],
    },
  });
}

/**
 * The Service `<name>-active`: the pod Vault labels `vault-active: "true"` itself (`by` "vault", the default), or,
 * while pods of an older operator are rolled onto Vault's registration, the pod the operator labels active
 * (chooseActiveSelector in service-registration.ts says which).
 */
export function activeService(cluster: VaultCluster, by: ActiveSelector = "vault"): ServiceObject {
  return owned<ServiceObject>(cluster, {
    apiVersion: "v1",
    kind: "Service",
    metadata: meta(cluster, activeServiceName(cluster)),
    spec: {
      type: "ClusterIP",
      selector: activeSelector(cluster, by),
      ports: [{ name: "https", port: API_PORT, targetPort: "https" }],
    },
  });
}

/** The headless Service `<name>-internal`: pod DNS names, published before pods are ready (raft join). */
export function internalService(cluster: VaultCluster): ServiceObject {
  return owned<ServiceObject>(cluster, {
    apiVersion: "v1",
    kind: "Service",
    metadata: meta(cluster, internalServiceName(cluster)),
    spec: {
      clusterIP: "None",
      publishNotReadyAddresses: true,
      selector: selectorLabels(cluster),
      ports: [
        { name: "https", port: API_PORT, targetPort: "https" },
        { name: "cluster", port: CLUSTER_PORT, targetPort: "cluster" },
      ],
    },
  });
}

/**
 * The PodDisruptionBudget: minAvailable = quorum(max(spec.replicas, voters)), `voters` being the raft voters that
 * exist now (scaling in from 5 to 3, the 5 voters still need 3); 0 for a single server.
 */
export function podDisruptionBudget(cluster: VaultCluster, voters = 0): PodDisruptionBudgetObject {
  const servers = Math.max(cluster.spec.replicas, voters);
  return owned<PodDisruptionBudgetObject>(cluster, {
    apiVersion: "policy/v1",
    kind: "PodDisruptionBudget",
    metadata: meta(cluster, clusterRef(cluster).name),
    spec: {
      // A single server has no quorum to keep: a budget of 1 would block every node drain for ever (the drain is an
      // outage of it either way; its data stays on its claim).
      minAvailable: servers <= 1 ? 0 : quorum(servers),
      selector: { matchLabels: selectorLabels(cluster) },
    },
  });
}

/** A kubernetes.io/tls Secret (tls.crt, tls.key and, for the server certificate, ca.crt), owned by the cluster. */
export function tlsSecret(
  cluster: VaultCluster,
  name: string,
  pair: { cert: string; key: string },
  caCert?: string,
): SecretObject {
  return owned<SecretObject>(cluster, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: meta(cluster, name),
    type: "kubernetes.io/tls",
    data: base64Values({
      "tls.crt": pair.cert,
      "tls.key": pair.key,
      ...(caCert === undefined ? {} : { "ca.crt": caCert }),
    }),
  });
}

/** Annotation on the keys Secret: when the operator started PUT /v1/sys/init. */
export const INIT_STARTED_ANNOTATION = "vault.capstan.dev/init-started";
/** Annotation on the keys Secret: the cluster_id the keys unseal. */
export const CLUSTER_ID_ANNOTATION = "vault.capstan.dev/cluster-id";
/**
 * On each server pod: the fingerprint of the listener certificate it should serve. The kubelet refreshes a mounted
 * Secret only when it syncs the pod (about once a minute); a change of the pod's annotations makes it sync at once,
 * so a renewed certificate reaches the reloader sidecar (and Vault, on SIGHUP) within seconds. Not part of the pod
 * template hash: a new value never replaces a pod.
 */
export const CERTIFICATE_ANNOTATION = "vault.capstan.dev/certificate";

/**
 * The keys Secret `<name>-unseal-keys` (unseal-key-0.., root-token, operator-token): owned by the cluster only
 * when spec.unseal.retainKeysOnDelete is false, so by default it outlives the VaultCluster.
 */
export function keysSecret(
  cluster: VaultCluster,
  data: Record<string, string>,
  annotations: Record<string, string>,
): SecretObject {
  const secret: SecretObject = {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { ...meta(cluster, keysSecretName(cluster)), annotations },
    type: "Opaque",
    data: base64Values(data),
  };
  return cluster.spec.unseal.retainKeysOnDelete ? secret : owned(cluster, secret);
}

/** A Secret's `data` from plain strings. */
export function base64Values(data: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(data).map(([k, v]) => [k, Buffer.from(v, "utf8").toString("base64")]),
  );
}
