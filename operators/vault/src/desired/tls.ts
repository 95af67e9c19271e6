// The listener certificates of a VaultCluster: a CA and a server certificate it signs, and the rule for when to
// renew, in the Vault operator's terms. The X.509 work is @capstan/core's certificates helper; this module only
// fixes Vault's choices (the CA's organization, server+client usage, the messages' wording).
import {
  type CertificatePair,
  createCA as coreCreateCA,
  renewalReason as coreRenewalReason,
  issueCertificate,
} from "@capstan/core";

export {
  type CertificateInfo,
  type CertificatePair,
  certificateInfo,
  parseGoDuration,
  signedBy,
} from "@capstan/core";

/** Lifetime of the operator-managed CA: ten years (the server certificate is what rotates). */
export const CA_DURATION_MS = 10 * 365 * 86_400_000;

/** A self-signed CA (keyCertSign) named `commonName`, valid from `now` (a minute earlier, for clock skew). */
export function createCA(
  commonName: string,
  now: Date,
  durationMs = CA_DURATION_MS,
): Promise<CertificatePair> {
  return coreCreateCA({ commonName, organization: "capstan-vault-operator", now, validityMs: durationMs });
}

/**
 * A server (and client) certificate for `hosts` (DNS names and IP addresses), signed by `ca`, valid for
 * `durationMs` from `now`.
 */
export function issueServerCertificate(
  ca: CertificatePair,
  hosts: readonly string[],
  now: Date,
  durationMs: number,
): Promise<CertificatePair> {
  return issueCertificate(ca, { hosts, usages: ["server", "client"], now, validityMs: durationMs });
}

/**
 * Why the operator-managed server certificate must be issued again, or undefined when it is fine: missing or
 * unreadable, not signed by the current CA, lacking one of `hosts`, or less than `renewBeforeMs` left at `now`.
 */
export function renewalReason(
  current: CertificatePair | undefined,
  caPem: string,
  hosts: readonly string[],
  now: Date,
  renewBeforeMs: number,
): string | undefined {
  return coreRenewalReason(current, {
    ca: caPem,
    hosts,
    now,
    renewBeforeMs,
    what: "the server certificate",
  });
}

/**
 * One PEM bundle of `cas` (each a PEM with one or more certificates), without repeats: what the operator's client
 * trusts (and a joining node is given as leader_ca_cert) while pods serve certificates of different CAs.
 */
export function trustBundle(cas: readonly string[]): string {
  if (cas.length === 1) return cas[0] ?? "";
  // A text without a PEM block is kept whole: the TLS library then says what is wrong with it.
  const blocks = cas.flatMap(
    (ca) => ca.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [ca],
  );
  return `${[...new Set(blocks)].join("\n")}\n`;
}
