// TLS of an EtcdCluster: where each endpoint's certificates come from, the Secrets the operator writes (one CA per
// cluster, a server+peer certificate per member, client certificates for the operator and the backup Jobs), the
// names each certificate carries, the files and flags of the etcd container, and the mounts of a backup Job.
import { parseGoDuration, type SecretObject, setControllerReference } from "@capstan/core";
import { type EtcdCluster, EtcdClusterKind, type EtcdTLSEndpoint } from "../api/etcd-cluster.ts";
import { clientServiceName, clusterLabels, clusterRef, peerServiceName } from "./names.ts";

/** Default lifetime of an operator-managed leaf certificate (90 days). */
export const DEFAULT_VALIDITY = "2160h";
/** Default renewal margin of an operator-managed leaf certificate (30 days). */
export const DEFAULT_RENEW_BEFORE = "720h";

/** Where the etcd container finds the peer files (ca.crt, tls.crt, tls.key). */
export const PEER_TLS_DIR = "/etc/etcd/tls/peer";
/** Where the etcd container finds the client-port files. */
export const CLIENT_TLS_DIR = "/etc/etcd/tls/client";
/** Where a backup Job's etcdctl finds its client certificate. */
export const BACKUP_TLS_DIR = "/etc/etcd/tls/backup";

/** Annotation on member pods: fingerprints of the certificates mounted in them (a change makes the kubelet sync). */
export const CERTIFICATES_ANNOTATION = "etcd.capstan.dev/certificates";

/** Where one endpoint's certificates come from, resolved from the spec. */
export type TLSSource =
  | { kind: "operatorManaged"; validityMs: number; renewBeforeMs: number }
  | { kind: "secretRef"; secretName: string }
  | CertManagerSource;

/** Certificates issued by cert-manager (spec.tls.<peer|client>.certManager), with the issuer's defaults filled. */
export interface CertManagerSource {
  kind: "certManager";
  issuerRef: { name: string; kind: string; group: string };
  duration?: string;
  renewBefore?: string;
}

function sourceOf(endpoint: EtcdTLSEndpoint | undefined): TLSSource | undefined {
  if (endpoint === undefined) return undefined;
  if (endpoint.secretRef !== undefined) return { kind: "secretRef", secretName: endpoint.secretRef.name };
  const cm = endpoint.certManager;
  if (cm !== undefined) {
    return {
      kind: "certManager",
      issuerRef: {
        name: cm.issuerRef.name,
        kind: cm.issuerRef.kind ?? "Issuer",
        group: cm.issuerRef.group ?? "cert-manager.io",
      },
      ...(cm.duration === undefined ? {} : { duration: cm.duration }),
      ...(cm.renewBefore === undefined ? {} : { renewBefore: cm.renewBefore }),
    };
  }
  return {
    kind: "operatorManaged",
    validityMs: parseGoDuration(endpoint.operatorManaged?.validity ?? DEFAULT_VALIDITY),
    renewBeforeMs: parseGoDuration(endpoint.operatorManaged?.renewBefore ?? DEFAULT_RENEW_BEFORE),
  };
}

/** The peer port's TLS source, or undefined for plain HTTP. */
export function peerTLS(cluster: EtcdCluster): TLSSource | undefined {
  return sourceOf(cluster.spec.tls?.peer);
}

/** The client port's TLS source, or undefined for plain HTTP. */
export function clientTLS(cluster: EtcdCluster): TLSSource | undefined {
  return sourceOf(cluster.spec.tls?.client);
}

/** True when the operator issues any certificate for the cluster (so it keeps a CA). */
export function operatorManagedTLS(cluster: EtcdCluster): boolean {
  return peerTLS(cluster)?.kind === "operatorManaged" || clientTLS(cluster)?.kind === "operatorManaged";
}

/** The Secret holding the cluster's CA (tls.crt and tls.key are the CA's; ca.crt is the bundle members trust). */
export function caSecretName(cluster: EtcdCluster): string {
  return `${clusterRef(cluster).name}-ca`;
}

/** The Secret holding a member's certificate (server and peer, server and client usage). */
export function memberTLSSecretName(member: string): string {
  return `${member}-tls`;
}

/** The Secret holding the operator's client certificate. */
export function operatorClientSecretName(cluster: EtcdCluster): string {
  return `${clusterRef(cluster).name}-operator-client-tls`;
}

/** The Secret holding the backup Jobs' client certificate. */
export function backupClientSecretName(cluster: EtcdCluster): string {
  return `${clusterRef(cluster).name}-backup-client-tls`;
}

/**
 * The common name of every member certificate; members accept a peer only with it (--peer-cert-allowed-cn), so a
 * client certificate of the same CA cannot join as a peer.
 */
export function memberCommonName(cluster: EtcdCluster): string {
  return `${clusterRef(cluster).name}-member`;
}

/** Common names of the client certificates (etcd's user name, should etcd authentication be turned on). */
export const OPERATOR_CLIENT_CN = "capstan-etcd-operator";
export const BACKUP_CLIENT_CN = "capstan-etcd-backup";

/** DNS names and addresses a member's certificate names: its peer name, the client Service's names, localhost. */
export function memberHosts(cluster: EtcdCluster, member: string): string[] {
  const { namespace } = clusterRef(cluster);
  const client = clientServiceName(cluster);
  return [
    `${member}.${peerServiceName(cluster)}.${namespace}.svc`,
    `${member}.${peerServiceName(cluster)}.${namespace}.svc.cluster.local`,
    client,
    `${client}.${namespace}`,
    `${client}.${namespace}.svc`,
    `${client}.${namespace}.svc.cluster.local`,
    "localhost",
    "127.0.0.1",
    "::1",
  ];
}

/** A kubernetes.io/tls Secret (tls.crt, tls.key, ca.crt) of the cluster, controlled by it. */
export function tlsSecret(
  cluster: EtcdCluster,
  name: string,
  pair: { cert: string; key: string },
  ca: string,
  labels: Record<string, string> = {},
): SecretObject {
  const secret: SecretObject = {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name,
      namespace: clusterRef(cluster).namespace,
      labels: { ...clusterLabels(cluster), ...labels },
    },
    type: "kubernetes.io/tls",
    data: {
      "tls.crt": Buffer.from(pair.cert).toString("base64"),
      "tls.key": Buffer.from(pair.key).toString("base64"),
      "ca.crt": Buffer.from(ca).toString("base64"),
    },
  };
  setControllerReference(cluster, EtcdClusterKind, secret);
  return secret;
}

/** The Secret of a member's client-port certificate when cert-manager issues it apart from its peer certificate. */
export function memberClientTLSSecretName(member: string): string {
  return `${member}-client-tls`;
}

/** True when both ports' certificates come from cert-manager, from different issuers (two per member then). */
export function separateClientCertificates(cluster: EtcdCluster): boolean {
  const peer = peerTLS(cluster);
  const client = clientTLS(cluster);
  if (peer?.kind !== "certManager" || client?.kind !== "certManager") return false;
  const [a, b] = [peer.issuerRef, client.issuerRef];
  return a.name !== b.name || a.kind !== b.kind || a.group !== b.group;
}

/**
 * The Secret a member mounts for one port: the user's (secretRef), else its own certificate, `<member>-tls`, which
 * serves both ports when both are issued the same way; a client-port certificate of another cert-manager issuer
 * than the peer port's is `<member>-client-tls`.
 */
export function memberSecretFor(cluster: EtcdCluster, port: "peer" | "client", member: string): string {
  const source = port === "peer" ? peerTLS(cluster) : clientTLS(cluster);
  if (source?.kind === "secretRef") return source.secretName;
  return port === "client" && separateClientCertificates(cluster)
    ? memberClientTLSSecretName(member)
    : memberTLSSecretName(member);
}

/** The Secret the operator's client reads its certificate from, or undefined without client TLS. */
export function operatorClientSecret(cluster: EtcdCluster): string | undefined {
  const source = clientTLS(cluster);
  if (source === undefined) return undefined;
  return source.kind === "secretRef" ? source.secretName : operatorClientSecretName(cluster);
}

/** The Secret a backup Job mounts for etcdctl, or undefined without client TLS. */
export function backupClientSecret(cluster: EtcdCluster): string | undefined {
  const source = clientTLS(cluster);
  if (source === undefined) return undefined;
  return source.kind === "secretRef" ? source.secretName : backupClientSecretName(cluster);
}

/** The etcd flags of TLS (none without it). etcd reads the certificate files at each handshake. */
export function tlsArgs(cluster: EtcdCluster): string[] {
  const peer = peerTLS(cluster);
  const client = clientTLS(cluster);
  return [
    ...(client === undefined
      ? []
      : [
          "--client-cert-auth=true",
          `--trusted-ca-file=${CLIENT_TLS_DIR}/ca.crt`,
          `--cert-file=${CLIENT_TLS_DIR}/tls.crt`,
          `--key-file=${CLIENT_TLS_DIR}/tls.key`,
        ]),
    ...(peer === undefined
      ? []
      : [
          "--peer-client-cert-auth=true",
          `--peer-trusted-ca-file=${PEER_TLS_DIR}/ca.crt`,
          `--peer-cert-file=${PEER_TLS_DIR}/tls.crt`,
          `--peer-key-file=${PEER_TLS_DIR}/tls.key`,
          // The member certificates the operator or cert-manager issues carry this name; a user's may not.
          ...(peer.kind === "secretRef" ? [] : [`--peer-cert-allowed-cn=${memberCommonName(cluster)}`]),
        ]),
  ];
}

/** Volume and mount types of a pod spec, loosely (the builders add them to their own objects). */
export interface TLSVolume {
  name: string;
  secret: { secretName: string; defaultMode: number };
}
export interface TLSMount {
  name: string;
  mountPath: string;
  readOnly: true;
}

/** The Secret volumes and mounts of a member's etcd container (none without TLS). */
export function memberTLSVolumes(
  cluster: EtcdCluster,
  member: string,
): { volumes: TLSVolume[]; mounts: TLSMount[] } {
  const volumes: TLSVolume[] = [];
  const mounts: TLSMount[] = [];
  for (const [name, port, source, dir] of [
    ["peer-tls", "peer", peerTLS(cluster), PEER_TLS_DIR],
    ["client-tls", "client", clientTLS(cluster), CLIENT_TLS_DIR],
  ] as const) {
    if (source === undefined) continue;
    // 0440 with fsGroup: readable by etcd's group only.
    volumes.push({
      name,
      secret: { secretName: memberSecretFor(cluster, port, member), defaultMode: 0o440 },
    });
    mounts.push({ name, mountPath: dir, readOnly: true });
  }
  return { volumes, mounts };
}

/** The backup Job's etcdctl flags and Secret volume for client TLS (none without it). */
export function backupTLS(cluster: EtcdCluster): {
  args: string[];
  volumes: TLSVolume[];
  mounts: TLSMount[];
} {
  const secretName = backupClientSecret(cluster);
  if (secretName === undefined) return { args: [], volumes: [], mounts: [] };
  return {
    args: [
      `--cacert=${BACKUP_TLS_DIR}/ca.crt`,
      `--cert=${BACKUP_TLS_DIR}/tls.crt`,
      `--key=${BACKUP_TLS_DIR}/tls.key`,
    ],
    volumes: [{ name: "client-tls", secret: { secretName, defaultMode: 0o440 } }],
    mounts: [{ name: "client-tls", mountPath: BACKUP_TLS_DIR, readOnly: true }],
  };
}
