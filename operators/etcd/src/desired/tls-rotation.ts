// The CA rotation of an operator-managed TLS cluster, as a pure planner: one step at a time, each re-checked on
// the next reconcile. etcd reads its certificate files at each handshake but its trusted CA file only at start
// (etcd-tls.test.ts shows both with a real etcd), so a trust change needs a restart and a leaf change does not:
//   1. CreateNextCA: a new CA; the trusted bundle (ca.crt everywhere) becomes old + new; old still signs.
//   2. RestartMember, one member at a time and only with every member ready: each starts trusting old + new.
//   3. SwitchSigningCA: the new CA signs from now on; every leaf is then "not signed by the current CA" and is
//      reissued by the usual renewal (ReissueLeaf), served at the next handshake without a restart.
//   4. DropOldCA once every leaf is the new CA's: the bundle becomes the new CA alone.
//   5. RestartMember again, one at a time, so no member trusts the old CA any longer.
// reconcile/cluster/tls.ts runs it (only while the membership planner finds the cluster in sync) and keeps every step's state
// on objects: the CA Secret (tls.crt/tls.key sign, ca.crt is the bundle, next.crt/next.key the new CA while a rotation
// is under way, an annotation naming the request it served) and each member pod (the CAs it was started trusting).

/** Annotation on an EtcdCluster: a user asks for a CA rotation by setting it to a value not served yet. */
export const ROTATE_CA_ANNOTATION = "etcd.capstan.dev/rotate-ca";
/** Annotation on the CA Secret: the rotate-ca value (or "expiry") the last rotation was started for. */
export const ROTATED_FOR_ANNOTATION = "etcd.capstan.dev/ca-rotated-for";
/** Annotation on the CA Secret: when the last rotation started (RFC 3339). */
export const ROTATION_STARTED_ANNOTATION = "etcd.capstan.dev/ca-rotation-started";
/** Annotation on a member pod: fingerprints (16 hex digits, comma-separated) of the CAs in ca.crt when it was made. */
export const TRUSTED_CA_ANNOTATION = "etcd.capstan.dev/trusted-ca";
/** Keys of the CA Secret holding the next CA while a rotation is under way. */
export const NEXT_CA_CERT = "next.crt";
export const NEXT_CA_KEY = "next.key";

/** How long before its end the CA is rotated without being asked: a year, or twice a leaf's lifetime if longer. */
export function caRenewBeforeMs(leafValidityMs: number): number {
  return Math.max(365 * 24 * 3_600_000, 2 * leafValidityMs);
}

/** True when a rotation is wanted: the user's rotate-ca value is not the one served last, or the CA nears its end. */
export function rotationRequested(input: {
  asked: string | undefined;
  servedFor: string | undefined;
  caNotAfter: Date | undefined;
  now: Date;
  renewBeforeMs: number;
}): boolean {
  const asked = input.asked !== undefined && input.asked !== "" && input.asked !== input.servedFor;
  const expiring =
    input.caNotAfter !== undefined && input.caNotAfter.getTime() - input.now.getTime() < input.renewBeforeMs;
  return asked || expiring;
}

/** A member as the rotation sees it. */
export interface RotationMember {
  name: string;
  /** Its pod is ready. */
  ready: boolean;
  /** Fingerprints of the CAs its etcd process trusts (the bundle its pod was started with). */
  trusts: readonly string[];
  /** Fingerprint of the CA that signed its current certificate. */
  leafIssuer: string;
}

/** What the planner is given. */
export interface RotationInput {
  /** A rotation is wanted (the CA is near its end, or a user asked for one). */
  requested: boolean;
  /** Fingerprint of the CA that signs leaves now. */
  signingCA: string;
  /** Fingerprints of the CAs in the trusted bundle (ca.crt). */
  bundle: readonly string[];
  /** Fingerprint of the new CA while a rotation is under way. */
  nextCA?: string;
  /** Fingerprints of the CAs that signed the client certificates (operator, backup Jobs). */
  clientIssuers: readonly string[];
  members: readonly RotationMember[];
}

/** The one step to take. */
export type RotationStep =
  | { type: "None" }
  | { type: "Wait"; reason: string; message: string }
  | { type: "CreateNextCA" }
  | { type: "RestartMember"; name: string; message: string }
  | { type: "SwitchSigningCA" }
  | { type: "ReissueLeaf"; name: string }
  | { type: "DropOldCA" };

const sameSet = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((x) => b.includes(x));

/** The next step of a CA rotation (or of nothing). */
export function planCARotation(input: RotationInput): RotationStep {
  const { members, bundle } = input;
  const stale = members.filter((m) => !sameSet(m.trusts, bundle));
  if (stale.length > 0) {
    const notReady = members.filter((m) => !m.ready);
    if (notReady.length > 0) {
      return {
        type: "Wait",
        reason: "MembersNotReady",
        message: `not restarting a member for the new CA bundle while ${notReady.map((m) => m.name).join(", ")} is not ready`,
      };
    }
    const [first] = [...stale].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    if (first !== undefined) {
      return {
        type: "RestartMember",
        name: first.name,
        message: `restarting ${first.name} so that etcd reads the new trusted CA bundle`,
      };
    }
  }
  if (input.nextCA !== undefined) {
    if (input.signingCA !== input.nextCA) return { type: "SwitchSigningCA" };
    const old = members.find((m) => m.leafIssuer !== input.nextCA);
    if (old !== undefined) return { type: "ReissueLeaf", name: old.name };
    if (input.clientIssuers.some((c) => c !== input.nextCA)) {
      return {
        type: "Wait",
        reason: "ClientCertificatesPending",
        message: "waiting for the client certificates to be reissued by the new CA",
      };
    }
    if (bundle.some((ca) => ca !== input.nextCA)) return { type: "DropOldCA" };
    return { type: "None" };
  }
  if (input.requested) return { type: "CreateNextCA" };
  return { type: "None" };
}
