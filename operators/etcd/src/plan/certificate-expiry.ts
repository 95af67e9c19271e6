// Judging the expiry of the certificates an EtcdCluster uses (the members', the operator's client, their CAs):
// each has a warning window before its notAfter, and one inside it (or past it) makes the condition
// CertificatesValid False with a message naming the Secret, the key, the notAfter and what to do. Pure: the
// certificates come parsed and `now` is an input; the messages never carry a moving "time left", so a reconcile
// that finds the same certificates writes nothing.
import { certificateInfo, signedBy, splitPemBundle } from "@capstan/core";

/** The longest warning window: 14 days, time to renew by hand or to mend an issuer. */
export const EXPIRY_WARNING_MS = 14 * 86_400_000;

/** The condition type the judgement is reported as (a separate one: it never hides a Degraded reason). */
export const CERTIFICATES_CONDITION = "CertificatesValid";

/**
 * Who renews a certificate: the operator itself (operatorManaged), cert-manager (a Certificate the operator made), or
 * someone else: the user (secretRef), or whoever runs the cert-manager issuer (the CA a cert-manager Secret carries).
 */
export type CertificateRenewer = "operator" | "cert-manager" | "issuer" | "user";

/** One certificate a cluster uses, as read from its Secret. */
export interface UsedCertificate {
  /** The Secret's name (in the cluster's namespace). */
  secret: string;
  /** The key of the Secret: tls.crt or ca.crt. */
  key: string;
  /** The spec field the Secret serves, e.g. spec.tls.client.secretRef. */
  field: string;
  renewer: CertificateRenewer;
  /**
   * How long before notAfter the renewer renews it (the operator's renewBefore, a Certificate's renewBefore); for
   * cert-manager without one, a third of the lifetime (cert-manager's default). Unused for "user" and "issuer".
   */
  renewBeforeMs?: number;
  /** The cert-manager Certificate that writes the Secret. */
  certificate?: string;
  /** The cert-manager issuer, e.g. "Issuer etcd-ca". */
  issuer?: string;
  notBefore: Date;
  notAfter: Date;
}

/** What the judgement found: the condition to set, and the certificates inside their window (expired first). */
export interface CertificateVerdict {
  status: "True" | "False";
  reason: "CertificatesValid" | "CertificateExpiring" | "CertificateExpired";
  message: string;
  expiring: UsedCertificate[];
}

/**
 * The warning window of a certificate, at most {@link EXPIRY_WARNING_MS}:
 * - renewed automatically (the operator, cert-manager): half of its renewBefore, so a certificate still not renewed
 *   halfway from its renewal time to its expiry means renewal is failing, while a renewal that is simply due (or
 *   takes a few minutes) never warns. cert-manager's renewBefore defaults to a third of the lifetime;
 * - renewed by someone else (a user's Secret, an issuer's CA): a third of its lifetime, where an automatic renewer
 *   (cert-manager's default) would have renewed it, so a short-lived certificate someone renews with a tool of their
 *   own does not warn all its life.
 */
export function warningWindowMs(cert: UsedCertificate, thresholdMs = EXPIRY_WARNING_MS): number {
  const lifetime = Math.max(0, cert.notAfter.getTime() - cert.notBefore.getTime());
  const automatic = cert.renewer === "operator" || cert.renewer === "cert-manager";
  const own = automatic ? (cert.renewBeforeMs ?? lifetime / 3) / 2 : lifetime / 3;
  return Math.min(thresholdMs, own);
}

/** What to do about one certificate, by who renews it. */
function remedy(namespace: string, cert: UsedCertificate): string {
  switch (cert.renewer) {
    case "user":
      return `the operator does not renew it: put a renewed certificate into Secret ${namespace}/${cert.secret} (members serve it at their next handshake; a new CA needs each member restarted, one at a time)`;
    case "cert-manager":
      return `cert-manager has not renewed it: check Certificate ${namespace}/${cert.certificate ?? cert.secret} (kubectl describe certificate) and ${cert.issuer ?? "its issuer"}`;
    case "issuer":
      return `it is the CA of ${cert.issuer ?? "the cert-manager issuer"}: renew that CA, then have cert-manager issue Certificate ${namespace}/${cert.certificate ?? cert.secret} again (cmctl renew) so its Secret carries the new one, and restart the members one at a time`;
    case "operator":
      return "the operator has not renewed it: see its logs and the cluster's Events";
  }
}

/** The certificate named in a message: Secret, key, field. */
function named(namespace: string, cert: UsedCertificate): string {
  return `the certificate in Secret ${namespace}/${cert.secret}, key ${cert.key} (${cert.field})`;
}

/** Judges the certificates of a cluster in namespace `namespace` at `now`. */
export function judgeCertificates(
  certs: readonly UsedCertificate[],
  namespace: string,
  now: Date,
  thresholdMs = EXPIRY_WARNING_MS,
): CertificateVerdict {
  const t = now.getTime();
  const byExpiry = [...certs].sort(
    (a, b) =>
      a.notAfter.getTime() - b.notAfter.getTime() || compare(a.secret, b.secret) || compare(a.key, b.key),
  );
  const expired = byExpiry.filter((c) => c.notAfter.getTime() <= t);
  const expiring = byExpiry.filter(
    (c) => c.notAfter.getTime() > t && c.notAfter.getTime() - t < warningWindowMs(c, thresholdMs),
  );
  const first = expired[0] ?? expiring[0];
  if (first === undefined) {
    const earliest = byExpiry[0];
    return {
      status: "True",
      reason: "CertificatesValid",
      message:
        earliest === undefined
          ? "no certificate to check"
          : `every certificate is valid beyond its warning window; the first to expire is ${named(namespace, earliest)}, at ${earliest.notAfter.toISOString()}`,
      expiring: [],
    };
  }
  const found = [...expired, ...expiring];
  const verb = first.notAfter.getTime() <= t ? "expired" : "expires";
  const others = found
    .slice(1)
    .map(
      (c) =>
        `Secret ${c.secret} key ${c.key} (${c.notAfter.getTime() <= t ? "expired" : "expires"} at ${c.notAfter.toISOString()})`,
    );
  return {
    status: "False",
    reason: expired.length > 0 ? "CertificateExpired" : "CertificateExpiring",
    message: `${named(namespace, first)} ${verb} at ${first.notAfter.toISOString()}: ${remedy(namespace, first)}${others.length === 0 ? "" : `; also ${others.join(", ")}`}`,
    expiring: found,
  };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The validity that matters of a Secret's key: notBefore and notAfter, or undefined when nothing parses. */
export interface Validity {
  notBefore: Date;
  notAfter: Date;
}

/**
 * The validity of the certificate a key of a Secret stands for:
 * - tls.crt (a certificate and maybe its chain): the certificate of the chain that expires first, since each one
 *   is presented;
 * - ca.crt (a bundle of trusted CAs): of the CAs that signed a certificate of tls.crt, the one that expires last
 *   (while one of them is valid the chain verifies); with none of them (or no tls.crt), the one that expires last.
 */
export function validityOf(key: "tls.crt" | "ca.crt", data: Record<string, string>): Validity | undefined {
  const chain = pems(data["tls.crt"]);
  if (key === "tls.crt") {
    const infos = chain.map(certificateInfo).filter((i) => i !== undefined);
    return pick(infos, (a, b) => a.notAfter.getTime() < b.notAfter.getTime());
  }
  const cas = pems(data["ca.crt"]);
  const signing = cas.filter((ca) => chain.some((c) => signedBy(c, ca)));
  const infos = (signing.length > 0 ? signing : cas).map(certificateInfo).filter((i) => i !== undefined);
  return pick(infos, (a, b) => a.notAfter.getTime() > b.notAfter.getTime());
}

function pems(text: string | undefined): string[] {
  if (text === undefined || text === "") return [];
  const split = splitPemBundle(text);
  return split.length > 0 ? split : [text];
}

function pick(infos: Validity[], better: (a: Validity, b: Validity) => boolean): Validity | undefined {
  let best: Validity | undefined;
  for (const i of infos) if (best === undefined || better(i, best)) best = i;
  return best === undefined ? undefined : { notBefore: best.notBefore, notAfter: best.notAfter };
}
