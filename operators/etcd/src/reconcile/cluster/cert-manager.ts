// cert-manager's certificates in place for one reconcile (spec.tls.<peer|client>.certManager): the operator's
// Certificates kept as desired (server-side apply only when missing or drifted: steady state writes nothing), the
// Secrets cert-manager writes read like a user's Secret (secretRef): member pods are annotated with the fingerprints
// of their certificates, so a renewal reaches the kubelet at once and etcd reads the new files at its next handshake.
//
// Plain reads and writes through the client, no informer: an informer on cert-manager's kinds would never sync in a
// cluster without cert-manager (its CRD missing), and would hold up the operator even when no cluster uses it. A
// reconcile waiting for cert-manager looks again shortly (the controller's waiting requeue).
import { type ApiError, isApiError, isNotFound, parseGoDuration, Secret, secretData } from "@capstan/core";
import type { EtcdCluster } from "../../api/etcd-cluster.ts";
import {
  type Certificate,
  CertificateKind,
  clientCertificates,
  type DesiredCertificate,
  firstCertManagerField,
  MEMBER_CERTIFICATE_COMPONENT,
  memberCertificates,
  NEW_MEMBER_LABEL,
} from "../../desired/cert-manager.ts";
import { CLUSTER_LABEL, clusterRef, MEMBER_LABEL } from "../../desired/names.ts";
import { CERTIFICATES_ANNOTATION, clientTLS, operatorClientSecretName } from "../../desired/tls.ts";
import type { EtcdClientTLS } from "../../etcd/etcd-client.ts";
import {
  type CertificateInUse,
  type ClusterTLS,
  shortFingerprint,
  type TLSContext,
  type TLSProblem,
} from "./tls-types.ts";

/** A Certificate whose Secret is not issued yet: the member (or the operator's client) waits for it. */
export interface CertificateWait {
  reason: string;
  message: string;
}

/** cert-manager's API is missing or refused: the cluster is Degraded until it is there. */
class CertManagerUnavailable extends Error {
  readonly problem: TLSProblem;
  constructor(problem: TLSProblem) {
    super(problem.message);
    this.problem = problem;
  }
}

/** The problem of an API error from cert-manager's kind, if it is one the user must fix (no CRD, no RBAC). */
function unavailable(cluster: EtcdCluster, err: unknown, field: string): TLSProblem | undefined {
  if (!isApiError(err)) return undefined;
  const e: ApiError = err;
  if (e.code === 404) {
    return {
      reason: "CertManagerMissing",
      field,
      message: `${field}: cert-manager's API (certificates.cert-manager.io/v1) is not served in this cluster: install cert-manager, or choose another source of certificates for a new cluster (${e.message})`,
    };
  }
  if (e.code === 403) {
    return {
      reason: "CertManagerForbidden",
      field,
      message: `${field}: the operator may not manage cert-manager Certificates in namespace ${clusterRef(cluster).namespace}: grant it certificates.cert-manager.io (the chart's RBAC does) (${e.message})`,
    };
  }
  return undefined;
}

/** What a Certificate's Ready condition says, for messages. */
function readiness(cert: Certificate | undefined): string {
  const ready = cert?.status?.conditions?.find((c) => c.type === "Ready");
  if (ready === undefined) return "cert-manager has not reported on it yet";
  return `Ready=${ready.status}${ready.reason ? ` ${ready.reason}` : ""}${ready.message ? `: ${ready.message}` : ""}`;
}

/** The Secret's PEM texts when it holds a complete certificate (ca.crt, tls.crt, tls.key), else undefined. */
function issued(data: Record<string, string>): EtcdClientTLS | undefined {
  const [ca, cert, key] = [data["ca.crt"], data["tls.crt"], data["tls.key"]];
  return ca && cert && key ? { ca, cert, key } : undefined;
}

/**
 * Keeps the cluster's cert-manager Certificates as desired and reads the Secrets cert-manager writes.
 * `userSecrets`: the other port's user Secret (secretRef), already read, whose fingerprint member pods carry too.
 * A TLSProblem: Degraded (cert-manager's API missing or refused) or, `waiting`, the operator's client certificate not
 * issued yet (nothing can be asked of etcd without it).
 */
export async function prepareCertManagerTLS(
  ctx: TLSContext,
  cluster: EtcdCluster,
  userSecrets: ReadonlyMap<string, Record<string, string>>,
): Promise<ClusterTLS | TLSProblem> {
  const { client, signal } = ctx;
  const { name, namespace } = clusterRef(cluster);
  const call = signal === undefined ? {} : { signal };
  const events: { reason: string; message: string }[] = [];
  const live = new Map<string, Certificate>();
  try {
    const list = await client.list(CertificateKind, {
      namespace,
      labelSelector: `${CLUSTER_LABEL}=${name}`,
      ...call,
    });
    for (const c of list.items) if (c.metadata.name !== undefined) live.set(c.metadata.name, c);
  } catch (err) {
    const problem = unavailable(cluster, err, firstCertManagerField(cluster));
    if (problem === undefined) throw err;
    return problem;
  }

  const readSecret = async (secretName: string): Promise<EtcdClientTLS | undefined> => {
    const secret = await client.get(Secret, secretName, namespace, signal).catch((err: unknown) => {
      if (isNotFound(err)) return undefined;
      throw err;
    });
    return issued(secretData(secret));
  };

  // The Secrets cert-manager wrote, as read in this reconcile (for the expiry judgement), by Secret name.
  const inUse = new Map<string, CertificateInUse>();

  /**
   * Applies `desired` unless live matches; returns the Secret's certificate once cert-manager has issued it.
   * `used`: the Secret is in use (not a Certificate requested for a member not made yet).
   */
  const ensure = async ({ field, certificate }: DesiredCertificate, used = true) => {
    const certName = certificate.metadata.name ?? "";
    const before = live.get(certName);
    let current = before;
    try {
      const result = await ctx.apply(CertificateKind, certificate, before);
      current = result.object;
      if (result.applied) {
        live.set(certName, current);
        events.push({
          reason: before === undefined ? "CertificateCreated" : "CertificateUpdated",
          message: `${before === undefined ? "created" : "updated"} cert-manager Certificate ${certName} (issuer ${certificate.spec.issuerRef.kind} ${certificate.spec.issuerRef.name}) for ${field}`,
        });
      }
    } catch (err) {
      const problem = unavailable(cluster, err, field);
      if (problem === undefined) throw err;
      throw new CertManagerUnavailable(problem);
    }
    const pair = await readSecret(certificate.spec.secretName);
    if (pair !== undefined && used) {
      const { renewBefore } = certificate.spec;
      inUse.set(certificate.spec.secretName, {
        secret: certificate.spec.secretName,
        field,
        source: "certManager",
        data: { "tls.crt": pair.cert, "ca.crt": pair.ca },
        keys: ["tls.crt", "ca.crt"],
        ...(renewBefore === undefined ? {} : { renewBeforeMs: parseGoDuration(renewBefore) }),
        certificate: certName,
        issuer: `${certificate.spec.issuerRef.kind} ${certificate.spec.issuerRef.name}`,
      });
    }
    const wait: CertificateWait | undefined =
      pair === undefined
        ? {
            reason: "CertificateNotReady",
            message: `waiting for cert-manager to issue Certificate ${namespace}/${certName} into Secret ${certificate.spec.secretName} (${field}; ${readiness(current)})`,
          }
        : undefined;
    return { pair, wait };
  };

  // The client certificates: the operator's is needed before etcd can be asked anything.
  let clientMaterial: EtcdClientTLS | undefined;
  let clientWait: TLSProblem | undefined;
  try {
    for (const desired of clientCertificates(cluster)) {
      const { pair, wait } = await ensure(desired);
      if (desired.certificate.spec.secretName !== operatorClientSecretName(cluster)) continue;
      if (wait !== undefined) clientWait = { ...wait, field: desired.field, waiting: true };
      clientMaterial = pair;
    }
  } catch (err) {
    if (err instanceof CertManagerUnavailable) return err.problem;
    throw err;
  }
  if (clientWait !== undefined) return clientWait;
  const clientSource = clientTLS(cluster);
  if (clientSource?.kind === "secretRef") {
    const data = userSecrets.get(clientSource.secretName) ?? {};
    clientMaterial = issued(data);
  }

  const userFingerprints = [...userSecrets.values()].map((d) => shortFingerprint(d["tls.crt"] ?? ""));

  /** Ensures a member's Certificates; the fingerprints of its certificates, or why it must wait. */
  const ensureMemberCertificates = async (member: string, fresh: boolean) => {
    const fingerprints: string[] = [];
    let wait: CertificateWait | undefined;
    for (const desired of memberCertificates(cluster, member, fresh)) {
      const result = await ensure(desired, !fresh);
      if (result.pair !== undefined) fingerprints.push(shortFingerprint(result.pair.cert));
      wait ??= result.wait;
    }
    return { annotation: [...fingerprints, ...userFingerprints].join(","), wait };
  };

  let reserved: string | undefined;
  return {
    ...(clientMaterial === undefined ? {} : { client: clientMaterial }),
    issued: events,
    ensureMember: async (member) => (await ensureMemberCertificates(member, false)).annotation,
    podAnnotations: async (member) => {
      const { annotation } = await ensureMemberCertificates(member, false);
      return annotation === "" ? {} : { [CERTIFICATES_ANNOTATION]: annotation };
    },
    memberPending: async (member) => {
      // A member not made yet keeps its Certificate while it waits (see NEW_MEMBER_LABEL).
      const known = live.get(memberCertificates(cluster, member)[0]?.certificate.metadata.name ?? "");
      const fresh = known === undefined || known.metadata.labels?.[NEW_MEMBER_LABEL] === "true";
      return (await ensureMemberCertificates(member, fresh)).wait;
    },
    reservedMember: () => reserved,
    forgetMembersExcept: async (keep) => {
      // Certificates of members that are gone, with the Secrets cert-manager wrote for them; of the ones made for a
      // member not made yet, the newest is kept (its name is the next new member's).
      const gone = [...live.values()].filter((c) => {
        const labels = c.metadata.labels ?? {};
        const member = labels[MEMBER_LABEL];
        return (
          labels["app.kubernetes.io/component"] === MEMBER_CERTIFICATE_COMPONENT &&
          member !== undefined &&
          !keep.has(member)
        );
      });
      const fresh = gone
        .filter((c) => c.metadata.labels?.[NEW_MEMBER_LABEL] === "true")
        .sort((a, b) =>
          (b.metadata.creationTimestamp ?? "").localeCompare(a.metadata.creationTimestamp ?? ""),
        );
      reserved = fresh[0]?.metadata.labels?.[MEMBER_LABEL];
      for (const c of gone) {
        if (c.metadata.labels?.[MEMBER_LABEL] === reserved) continue;
        const certName = c.metadata.name ?? "";
        await client.delete(CertificateKind, certName, namespace, call).catch((err: unknown) => {
          if (!isNotFound(err)) throw err;
        });
        await client.delete(Secret, c.spec.secretName, namespace, call).catch((err: unknown) => {
          if (!isNotFound(err)) throw err;
        });
        live.delete(certName);
        inUse.delete(c.spec.secretName);
        events.push({
          reason: "CertificateDeleted",
          message: `deleted cert-manager Certificate ${certName} and its Secret: member ${c.metadata.labels?.[MEMBER_LABEL]} is gone`,
        });
      }
    },
    caState: () => undefined,
    inUse: () => [...inUse.values()],
  };
}
