// The expiry of the certificates a cluster uses, each reconcile: their notAfter and the start of their warning
// window exported as gauges (the alert follows the operator's own judgement), and the
// judgement (plan/certificate-expiry.ts) set as the condition CertificatesValid, with a Warning Event when it turns
// False or names other certificates (a Normal one when it is True again). Read from the Secrets prepareTLS already
// read: no Secret is read again.
import {
  type Condition,
  findCondition,
  type ReconcileContext,
  removeCondition,
  setCondition,
} from "@capstan/core";
import type { EtcdCluster } from "../../api/etcd-cluster.ts";
import { clusterRef } from "../../desired/names.ts";
import { clientTLS, peerTLS } from "../../desired/tls.ts";
import {
  CERTIFICATES_CONDITION,
  type CertificateRenewer,
  type CertificateVerdict,
  judgeCertificates,
  type UsedCertificate,
  validityOf,
  warningWindowMs,
} from "../../plan/certificate-expiry.ts";
import type { EtcdOperatorMetrics } from "../metrics.ts";
import type { CertificateInUse, ClusterTLS } from "./tls-types.ts";

/** Who renews a key of a Secret in use. */
function renewerOf(cert: CertificateInUse, key: "tls.crt" | "ca.crt"): CertificateRenewer {
  switch (cert.source) {
    case "operatorManaged":
      return "operator";
    case "certManager":
      return key === "tls.crt" ? "cert-manager" : "issuer";
    case "secretRef":
      return "user";
  }
}

/** The certificates of the Secrets in use, parsed (keys that hold none that parses are left out). */
export function usedCertificates(
  inUse: readonly CertificateInUse[],
): (UsedCertificate & { source: string })[] {
  const out: (UsedCertificate & { source: string })[] = [];
  for (const cert of inUse) {
    for (const key of cert.keys) {
      const validity = validityOf(key, cert.data);
      if (validity === undefined) continue;
      const renewer = renewerOf(cert, key);
      out.push({
        secret: cert.secret,
        key,
        field: cert.field,
        source: cert.source,
        renewer,
        ...(renewer === "operator" || renewer === "cert-manager"
          ? cert.renewBeforeMs === undefined
            ? {}
            : { renewBeforeMs: cert.renewBeforeMs }
          : {}),
        ...(cert.certificate === undefined ? {} : { certificate: cert.certificate }),
        ...(cert.issuer === undefined ? {} : { issuer: cert.issuer }),
        ...validity,
      });
    }
  }
  return out;
}

/**
 * Judges the certificates `tls` holds, and exports each one's notAfter. undefined when the cluster has no TLS (its
 * series are dropped then). Call it once the members' certificates are ensured (refreshCertificates).
 */
export function judgeClusterCertificates(
  cluster: EtcdCluster,
  tls: ClusterTLS,
  metrics: EtcdOperatorMetrics,
  now: Date,
): CertificateVerdict | undefined {
  const { namespace, name } = clusterRef(cluster);
  if (peerTLS(cluster) === undefined && clientTLS(cluster) === undefined) {
    metrics.certificatesObserved(namespace, name, []);
    return undefined;
  }
  const certs = usedCertificates(tls.inUse());
  metrics.certificatesObserved(
    namespace,
    name,
    certs.map((c) => ({ ...c, warnFrom: new Date(c.notAfter.getTime() - warningWindowMs(c)) })),
  );
  return judgeCertificates(certs, namespace, now);
}

/**
 * The cluster's conditions with CertificatesValid set from `verdict` (removed when undefined: no TLS), recording a
 * Warning Event when it turns False or its message changes (other certificates, or one renewed while another is
 * still close), and a Normal one when it turns True again. Nothing changes while the certificates do not.
 */
export function withCertificatesCondition(
  ctx: Pick<ReconcileContext, "recorder" | "log">,
  cluster: EtcdCluster,
  conditions: Condition[] | undefined,
  verdict: CertificateVerdict | undefined,
  now: Date,
): Condition[] {
  if (verdict === undefined) return removeCondition(conditions, CERTIFICATES_CONDITION);
  const before = findCondition(cluster.status?.conditions, CERTIFICATES_CONDITION);
  if (verdict.status === "False") {
    if (
      before?.status !== "False" ||
      before.reason !== verdict.reason ||
      before.message !== verdict.message
    ) {
      ctx.log.warn({ reason: verdict.reason }, verdict.message);
      ctx.recorder.event(cluster, "Warning", verdict.reason, "Certificates", verdict.message);
    }
  } else if (before?.status === "False") {
    const message = `certificates renewed: ${verdict.message}`;
    ctx.log.info({ reason: "CertificatesRenewed" }, message);
    ctx.recorder.event(cluster, "Normal", "CertificatesRenewed", "Certificates", message);
  }
  return setCondition(
    conditions,
    {
      type: CERTIFICATES_CONDITION,
      status: verdict.status,
      reason: verdict.reason,
      message: verdict.message,
      observedGeneration: cluster.metadata.generation ?? 0,
    },
    now,
  );
}
