// cert-manager as the source of an EtcdCluster's certificates (spec.tls.<peer|client>.certManager): the
// cert-manager.io/v1 Certificates the operator creates and owns, one per certificate it would issue itself (each
// member's, the operator's client, the backup Jobs' client), with the Secret names and keys (ca.crt, tls.crt,
// tls.key) the member pods, the operator's client and the backup Jobs already read.
import { isIP } from "node:net";
import { defineKind, type KubeObject, setControllerReference } from "@capstan/core";
import { type EtcdCluster, EtcdClusterKind } from "../api/etcd-cluster.ts";
import { clusterLabels, clusterRef, MEMBER_LABEL } from "./names.ts";
import {
  BACKUP_CLIENT_CN,
  backupClientSecretName,
  type CertManagerSource,
  clientTLS,
  memberClientTLSSecretName,
  memberCommonName,
  memberHosts,
  memberTLSSecretName,
  OPERATOR_CLIENT_CN,
  operatorClientSecretName,
  peerTLS,
  separateClientCertificates,
} from "./tls.ts";

/** A cert-manager.io/v1 Certificate, as far as the operator writes and reads it. */
export interface Certificate extends KubeObject {
  spec: {
    secretName: string;
    issuerRef: { name: string; kind: string; group: string };
    commonName: string;
    dnsNames?: string[];
    ipAddresses?: string[];
    usages: string[];
    duration?: string;
    renewBefore?: string;
    privateKey: { algorithm: "ECDSA"; size: 256; rotationPolicy: "Always" };
    secretTemplate: { labels: Record<string, string> };
  };
  status?: {
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    notAfter?: string;
  };
}

/** The Certificate kind descriptor (cert-manager's CRD; may be absent from the cluster). */
export const CertificateKind = defineKind<Certificate>({
  group: "cert-manager.io",
  version: "v1",
  kind: "Certificate",
  plural: "certificates",
  namespaced: true,
});

/** Component label of a member's Certificate and of the Secret cert-manager writes for it (value: the member). */
export const MEMBER_CERTIFICATE_COMPONENT = "member-certificate";
/** Component label of the client Certificates (the operator's, the backup Jobs'). */
export const CLIENT_CERTIFICATE_COMPONENT = "client-certificate";
/**
 * Label on a member's Certificate made before the member exists (a seed or a learner about to be added, whose
 * certificate must be issued first): such a Certificate is kept while its member is not known yet, and its name is
 * the one the next new member takes. Dropped once the member's pod is made.
 */
export const NEW_MEMBER_LABEL = "etcd.capstan.dev/new-member";

/** The TLS field of a port, for messages. */
export function certManagerField(port: "peer" | "client"): string {
  return `spec.tls.${port}.certManager`;
}

/** Usages of a member's certificate (server and client: it serves a port and dials its peers). */
const MEMBER_USAGES = ["digital signature", "key encipherment", "server auth", "client auth"];
/** Usages of a client certificate. */
const CLIENT_USAGES = ["digital signature", "key encipherment", "client auth"];

/** One Certificate of the cluster, controlled by it. */
function certificate(
  cluster: EtcdCluster,
  source: CertManagerSource,
  cert: { secretName: string; commonName: string; hosts: string[]; usages: string[] },
  labels: Record<string, string>,
): Certificate {
  const allLabels = { ...clusterLabels(cluster), ...labels };
  const dnsNames = cert.hosts.filter((h) => isIP(h) === 0);
  const ipAddresses = cert.hosts.filter((h) => isIP(h) !== 0);
  const obj: Certificate = {
    apiVersion: CertificateKind.apiVersion,
    kind: CertificateKind.kind,
    metadata: { name: cert.secretName, namespace: clusterRef(cluster).namespace, labels: allLabels },
    spec: {
      secretName: cert.secretName,
      issuerRef: { ...source.issuerRef },
      commonName: cert.commonName,
      ...(dnsNames.length === 0 ? {} : { dnsNames }),
      ...(ipAddresses.length === 0 ? {} : { ipAddresses }),
      usages: cert.usages,
      ...(source.duration === undefined ? {} : { duration: source.duration }),
      ...(source.renewBefore === undefined ? {} : { renewBefore: source.renewBefore }),
      // A new key at each renewal, of the kind the operator's own certificates have.
      privateKey: { algorithm: "ECDSA", size: 256, rotationPolicy: "Always" },
      // So the operator finds (and deletes with their member) the Secrets cert-manager writes.
      secretTemplate: { labels: allLabels },
    },
  };
  setControllerReference(cluster, EtcdClusterKind, obj);
  return obj;
}

/** A desired Certificate and the TLS field it comes from (for messages). */
export interface DesiredCertificate {
  field: string;
  certificate: Certificate;
}

/**
 * The Certificates of member `member`: one serving both ports (`<member>-tls`) when both are issued by the same
 * cert-manager issuer or only one port is cert-manager's; two when the ports have different issuers (the client
 * port's then `<member>-client-tls`). `fresh`: made before the member exists (labelled {@link NEW_MEMBER_LABEL}).
 */
export function memberCertificates(
  cluster: EtcdCluster,
  member: string,
  fresh = false,
): DesiredCertificate[] {
  const peer = peerTLS(cluster);
  const client = clientTLS(cluster);
  const labels = {
    "app.kubernetes.io/component": MEMBER_CERTIFICATE_COMPONENT,
    [MEMBER_LABEL]: member,
    ...(fresh ? { [NEW_MEMBER_LABEL]: "true" } : {}),
  };
  const leaf = (secretName: string) => ({
    secretName,
    commonName: memberCommonName(cluster),
    hosts: memberHosts(cluster, member),
    usages: MEMBER_USAGES,
  });
  const out: DesiredCertificate[] = [];
  if (peer?.kind === "certManager") {
    out.push({
      field: certManagerField("peer"),
      certificate: certificate(cluster, peer, leaf(memberTLSSecretName(member)), labels),
    });
  }
  if (
    client?.kind === "certManager" &&
    (peer?.kind !== "certManager" || separateClientCertificates(cluster))
  ) {
    const secretName =
      peer?.kind === "certManager" ? memberClientTLSSecretName(member) : memberTLSSecretName(member);
    out.push({
      field: certManagerField("client"),
      certificate: certificate(cluster, client, leaf(secretName), labels),
    });
  }
  return out;
}

/** The client Certificates (the operator's, then the backup Jobs'), when cert-manager issues the client port's. */
export function clientCertificates(cluster: EtcdCluster): DesiredCertificate[] {
  const client = clientTLS(cluster);
  if (client?.kind !== "certManager") return [];
  const labels = { "app.kubernetes.io/component": CLIENT_CERTIFICATE_COMPONENT };
  return [
    [operatorClientSecretName(cluster), OPERATOR_CLIENT_CN],
    [backupClientSecretName(cluster), BACKUP_CLIENT_CN],
  ].map(([secretName = "", commonName = ""]) => ({
    field: certManagerField("client"),
    certificate: certificate(
      cluster,
      client,
      { secretName, commonName, hosts: [], usages: CLIENT_USAGES },
      labels,
    ),
  }));
}

/** True when cert-manager issues either port's certificates. */
export function usesCertManager(cluster: EtcdCluster): boolean {
  return peerTLS(cluster)?.kind === "certManager" || clientTLS(cluster)?.kind === "certManager";
}

/** The field of the first port whose certificates cert-manager issues (for messages about the API as a whole). */
export function firstCertManagerField(cluster: EtcdCluster): string {
  return certManagerField(peerTLS(cluster)?.kind === "certManager" ? "peer" : "client");
}
