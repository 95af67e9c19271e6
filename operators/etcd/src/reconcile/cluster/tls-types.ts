// What the TLS modules share (tls.ts, cert-manager.ts, auth.ts, certificate-expiry.ts): the TLS of one cluster for one
// reconcile, the certificates in use, why TLS is not in place, and a certificate's short fingerprint (a Secret's
// values as text are core's secretData). A leaf module, so those modules never import one another for them.
import {
  type CertificatePair,
  certificateInfo,
  type ReconcileContext,
  type SecretObject,
} from "@capstan/core";
import type { TLSSource } from "../../desired/tls.ts";
import type { EtcdClientTLS } from "../../etcd/etcd-client.ts";

/** What preparing TLS uses of the reconcile: its client, its server-side apply (cert-manager's kinds) and signal. */
export type TLSContext = Pick<ReconcileContext, "client" | "apply" | "signal">;

/** TLS of one cluster for one reconcile. */
export interface ClusterTLS {
  /** What the operator's etcd client uses (undefined: the client port is plain HTTP). */
  client?: EtcdClientTLS;
  /**
   * Makes sure `member` has a current certificate (issuing or renewing it) and returns the value of its pod's
   * certificates annotation ("" without TLS).
   */
  ensureMember(member: string): Promise<string>;
  /** Deletes the certificate Secrets of members not in `keep`. */
  forgetMembersExcept(keep: ReadonlySet<string>): Promise<void>;
  /**
   * Annotations of a member pod about to be created (its certificate issued first): its certificates' fingerprints,
   * and the CAs it will start trusting.
   */
  podAnnotations(member: string): Promise<Record<string, string>>;
  /** What was issued or renewed so far, for Events. */
  readonly issued: { reason: string; message: string }[];
  /** The operator's CA and its leaves as they are now, when the operator keeps a CA (for the CA rotation). */
  caState(): CAState | undefined;
  /**
   * cert-manager only: makes sure `member`'s certificates are requested and says why it must wait when one is not
   * issued yet (a member is added or started only once its certificates are there); undefined: ready.
   */
  memberPending?(member: string): Promise<{ reason: string; message: string } | undefined>;
  /** cert-manager only: a member whose certificates were requested before it was made: the next new member's name. */
  reservedMember?(): string | undefined;
  /**
   * The certificates in use as this reconcile read them (the user's Secrets, and the operator's or cert-manager's
   * ones of the client and of each member ensured so far): for the expiry judgement, with no Secret read again.
   */
  inUse(): CertificateInUse[];
}

/** A Secret of certificates a cluster uses, as one reconcile read it. */
export interface CertificateInUse {
  secret: string;
  /** The spec field(s) it serves, e.g. spec.tls.client.secretRef. */
  field: string;
  source: TLSSource["kind"];
  /** The Secret's PEM texts (tls.crt, ca.crt). */
  data: Record<string, string>;
  /** The keys that count: tls.crt, and ca.crt unless another Secret holds that CA (the operator's own CA Secret). */
  keys: ("tls.crt" | "ca.crt")[];
  /** How long before notAfter it is renewed, when the operator or cert-manager renews it and says when. */
  renewBeforeMs?: number;
  /** cert-manager: the Certificate that writes the Secret and its issuer ("ClusterIssuer corp"). */
  certificate?: string;
  issuer?: string;
}

/** The operator's CA of a cluster as this reconcile read (or made) it. */
export interface CAState {
  /** The CA Secret as read (undefined when this reconcile created it). */
  secret?: SecretObject;
  /** The CA that signs leaves now (tls.crt, tls.key). */
  signing: CertificatePair;
  /** The trusted bundle (ca.crt): the signing CA, and during a rotation the other one. */
  bundle: string;
  /** The new CA while a rotation is under way (next.crt, next.key). */
  next?: CertificatePair;
  /** Lifetime of the leaves it signs (the CA's renewal margin follows from it). */
  leafValidityMs: number;
  /** The current certificate (PEM) of each operator-managed leaf Secret, by Secret name. */
  leaves: ReadonlyMap<string, string>;
}

/** The first 16 hex digits of a certificate's fingerprint ("" when it cannot be parsed). */
export function shortFingerprint(pem: string): string {
  return certificateInfo(pem)?.fingerprint.slice(0, 16) ?? "";
}

/**
 * Why TLS is not in place (a user's Secret missing or incomplete, cert-manager's API missing): the cluster is
 * Degraded until it is; `waiting`: a certificate is on its way (cert-manager issuing it), Progressing.
 */
export interface TLSProblem {
  reason: string;
  field: string;
  message: string;
  waiting?: boolean;
}
