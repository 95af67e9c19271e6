// The shapes of X.509 work shared by certificates.ts (the API) and x509-issue.ts (the code that makes
// certificates, loaded on first use): a certificate pair, its usages, and the options of each way to make one.
// A leaf module, so the two never import one another for their types.

/** A PEM certificate (chain) and its PEM (PKCS#8) private key. */
export interface CertificatePair {
  cert: string;
  key: string;
}

/** Default lifetime of a CA made by {@link createCA}: ten years (the leaves are what rotates). */
export const CA_VALIDITY_MS = 10 * 365 * 86_400_000;

/** What a leaf certificate may be used for (extended key usage). */
export type CertificateUsage = "server" | "client";

/** Options of {@link createCA}. */
export interface CreateCAOptions {
  commonName: string;
  /** The subject's O (e.g. the operator's name). */
  organization?: string;
  /** Default: the current time. */
  now?: Date;
  /** Default ten years (the leaves are what rotates). */
  validityMs?: number;
}

/** Options of {@link issueCertificate}. */
export interface IssueOptions {
  /** DNS names and IP addresses (v4 or v6) of the subjectAltName; may be empty for a client certificate. */
  hosts: readonly string[];
  /** Default: the first DNS name of `hosts`. A client certificate's CN is often the user name it stands for. */
  commonName?: string;
  /** Extended key usages; default server and client. */
  usages?: readonly CertificateUsage[];
  /** Default: the current time. */
  now?: Date;
  /** How long it is valid from `now`. */
  validityMs: number;
}

/** Options of {@link selfSignedCertificate}. */
export interface SelfSignedOptions {
  /** DNS names and IP addresses the certificate names. */
  hosts: readonly string[];
  /** Default: the current time. */
  now?: Date;
  validityMs: number;
}
