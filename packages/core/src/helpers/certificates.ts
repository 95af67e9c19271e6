// X.509 for operators: create a CA, issue a leaf (server and/or client) with SANs and a validity, read a
// certificate's expiry and names back, and decide when one must be renewed. node:crypto's X509Certificate
// reads certificates; making them (pkijs builds the X.509 structures, WebCrypto makes and signs with ECDSA
// P-256 keys) is in x509-issue.ts, loaded on the first certificate made: pkijs and asn1js add ~5 MiB to a
// process's RSS, which an operator that only reads certificates, or makes none, does not pay. Used by the
// metrics server's self-signed certificate and by the operators that manage TLS for their operands.
import { X509Certificate } from "node:crypto";
import { isIP } from "node:net";
import type {
  CertificatePair,
  CreateCAOptions,
  IssueOptions,
  SelfSignedOptions,
} from "./certificate-options.ts";

export {
  CA_VALIDITY_MS,
  type CertificatePair,
  type CertificateUsage,
  type CreateCAOptions,
  type IssueOptions,
  type SelfSignedOptions,
} from "./certificate-options.ts";

/** A self-signed CA (keyCertSign, pathLen 0) valid from `now` (a minute earlier, for clock skew). */
export async function createCA(options: CreateCAOptions): Promise<CertificatePair> {
  return (await issuing()).createCA(options);
}

/** A leaf certificate signed by `ca` (a pair from {@link createCA}, or any ECDSA P-256 CA). */
export async function issueCertificate(ca: CertificatePair, options: IssueOptions): Promise<CertificatePair> {
  return (await issuing()).issueCertificate(ca, options);
}

/** A self-signed server certificate for `hosts` (no CA: each client trusts it as is, or skips verification). */
export async function selfSignedCertificate(options: SelfSignedOptions): Promise<CertificatePair> {
  return (await issuing()).selfSignedCertificate(options);
}

/** The code that makes certificates, loaded when the first one is made. */
function issuing(): Promise<typeof import("./x509-issue.ts")> {
  return import("./x509-issue.ts");
}

/** An IPv6 address in its shortest form (node prints a certificate's as 0:0:0:0:0:0:0:1); other hosts as they are. */
function canonicalHost(host: string): string {
  return isIP(host) === 6 ? new URL(`http://[${host}]/`).hostname.slice(1, -1) : host;
}

/** What an operator reads from a certificate. */
export interface CertificateInfo {
  notBefore: Date;
  notAfter: Date;
  /** The subject's common name. */
  commonName: string;
  /** DNS names and IP addresses of its subjectAltName (IPv6 in its shortest form, e.g. ::1). */
  hosts: string[];
  /** SHA-256 of the certificate (DER), lower-case hex: names this certificate among its renewals. */
  fingerprint: string;
}

/** The validity, names and fingerprint of the first certificate in `pem`, or undefined when it cannot be parsed. */
export function certificateInfo(text: string): CertificateInfo | undefined {
  try {
    const x = new X509Certificate(text);
    const hosts = (x.subjectAltName ?? "")
      .split(", ")
      .map((s) => /^(?:DNS|IP Address):(.*)$/.exec(s)?.[1])
      .filter((h) => h !== undefined)
      .map(canonicalHost);
    return {
      notBefore: new Date(x.validFrom),
      notAfter: new Date(x.validTo),
      commonName: /(?:^|\n)CN=(.*)/.exec(x.subject)?.[1] ?? "",
      hosts,
      fingerprint: x.fingerprint256.replaceAll(":", "").toLowerCase(),
    };
  } catch {
    return undefined;
  }
}

/** The PEM certificates in a bundle (e.g. a ca.crt holding an old and a new CA during a rotation). */
export function splitPemBundle(bundle: string): string[] {
  return bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g) ?? [];
}

/** True when `certPem` was signed by the CA in `caPem` (by any CA of it, when it is a bundle). */
export function signedBy(certPem: string, caPem: string): boolean {
  const cas = splitPemBundle(caPem);
  return (cas.length === 0 ? [caPem] : cas).some((one) => {
    try {
      const cert = new X509Certificate(certPem);
      const ca = new X509Certificate(one);
      return cert.checkIssued(ca) && cert.verify(ca.publicKey);
    } catch {
      return false;
    }
  });
}

/** What {@link renewalReason} checks a certificate against. */
export interface RenewalCriteria {
  /** The CA (PEM) it must be signed by. */
  ca: string;
  /** Names it must carry (a renewal adds a new one, e.g. a new Service name). */
  hosts: readonly string[];
  now: Date;
  /** Renew when less than this is left. */
  renewBeforeMs: number;
  /** Names the certificate in the reason (default "the certificate"). */
  what?: string;
}

/**
 * Why a certificate must be issued again, or undefined when it is fine: missing or unreadable, not signed by
 * the CA, lacking one of the hosts, or less than renewBeforeMs left at now.
 */
export function renewalReason(current: CertificatePair | undefined, c: RenewalCriteria): string | undefined {
  const what = c.what ?? "the certificate";
  if (current === undefined) return `no ${what.replace(/^the /, "")} yet`;
  const info = certificateInfo(current.cert);
  if (info === undefined) return `${what} cannot be parsed`;
  if (!signedBy(current.cert, c.ca)) return `${what} is not signed by the current CA`;
  const missing = c.hosts.filter((h) => !info.hosts.includes(canonicalHost(h)));
  if (missing.length > 0) return `${what} does not name ${missing.join(", ")}`;
  const left = info.notAfter.getTime() - c.now.getTime();
  if (left < c.renewBeforeMs) {
    return `${what} expires at ${info.notAfter.toISOString()}, within renewBefore`;
  }
  return undefined;
}
