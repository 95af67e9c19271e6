// The certificate-expiry judgement: each certificate's warning window, the condition's reason and message (the
// Secret, the key, the notAfter, what to do), and which certificate of a Secret's key counts.
import { createCA, issueCertificate } from "@capstan/core";
import { describe, expect, it } from "vitest";
import {
  EXPIRY_WARNING_MS,
  judgeCertificates,
  type UsedCertificate,
  validityOf,
  warningWindowMs,
} from "./certificate-expiry.ts";

const DAY = 86_400_000;
const now = new Date("2026-06-01T00:00:00Z");
const at = (days: number) => new Date(now.getTime() + days * DAY);

/** A certificate valid from `from` to `to` (days from now). */
function cert(from: number, to: number, extra: Partial<UsedCertificate> = {}): UsedCertificate {
  return {
    secret: "mine",
    key: "tls.crt",
    field: "spec.tls.client.secretRef",
    renewer: "user",
    notBefore: at(from),
    notAfter: at(to),
    ...extra,
  };
}

/** A cert-manager Secret's tls.crt (`key` ca.crt: the issuer's CA in it), valid from `from` to `to` days from now. */
function certManager(
  secret: string,
  issuer: string,
  from: number,
  to: number,
  key = "tls.crt",
): UsedCertificate {
  return cert(from, to, {
    secret,
    key,
    field: "spec.tls.client.certManager",
    renewer: key === "tls.crt" ? "cert-manager" : "issuer",
    certificate: secret,
    issuer,
  });
}

describe("warningWindowMs", () => {
  it("is 14 days for a year-long user certificate, a third of the lifetime for a short one", () => {
    expect(warningWindowMs(cert(-300, 65))).toBe(EXPIRY_WARNING_MS);
    expect(warningWindowMs(cert(0, 3))).toBe(DAY);
  });

  it("is half of renewBefore for what cert-manager or the operator renews (a third of the lifetime by default)", () => {
    // cert-manager's defaults: 90 days, renewed with 30 left: the warning comes with 14 left.
    expect(warningWindowMs(cert(0, 90, { renewer: "cert-manager" }))).toBe(EXPIRY_WARNING_MS);
    // 24 h certificates renewed 8 h before expiry: warned about 4 h before, never while a renewal is merely due.
    expect(warningWindowMs(cert(0, 1, { renewer: "cert-manager" }))).toBeCloseTo(DAY / 6);
    expect(warningWindowMs(cert(0, 90, { renewer: "operator", renewBeforeMs: 2 * DAY }))).toBe(DAY);
  });
});

describe("judgeCertificates", () => {
  it("all valid beyond their windows: True, naming the first to expire, with no time left in the message", () => {
    const v = judgeCertificates([cert(-10, 300), cert(-10, 200, { key: "ca.crt" })], "ns", now);
    expect(v).toMatchObject({ status: "True", reason: "CertificatesValid", expiring: [] });
    expect(v.message).toBe(
      "every certificate is valid beyond its warning window; the first to expire is the certificate in Secret ns/mine, key ca.crt (spec.tls.client.secretRef), at 2026-12-18T00:00:00.000Z",
    );
    // The same certificates a day later: the same condition (no status write).
    expect(judgeCertificates([cert(-10, 300), cert(-10, 200, { key: "ca.crt" })], "ns", at(1))).toEqual(v);
  });

  it("a user certificate 3 days from expiry: CertificateExpiring, naming the Secret, key, notAfter and what to do", () => {
    const v = judgeCertificates([cert(-362, 3), cert(-10, 300, { key: "ca.crt" })], "ns", now);
    expect(v.status).toBe("False");
    expect(v.reason).toBe("CertificateExpiring");
    expect(v.message).toBe(
      "the certificate in Secret ns/mine, key tls.crt (spec.tls.client.secretRef) expires at 2026-06-04T00:00:00.000Z: the operator does not renew it: put a renewed certificate into Secret ns/mine (members serve it at their next handshake; a new CA needs each member restarted, one at a time)",
    );
    expect(v.expiring.map((c) => c.key)).toEqual(["tls.crt"]);
    // A day later the message is the same: no Event again, no status write.
    expect(judgeCertificates([cert(-362, 3), cert(-10, 300, { key: "ca.crt" })], "ns", at(1))).toEqual(v);
  });

  it("an expired certificate comes first: CertificateExpired, the others listed after it", () => {
    const v = judgeCertificates(
      [
        certManager("demo-a-tls", "Issuer etcd-ca", -80, 10),
        certManager("demo-a-tls", "Issuer etcd-ca", -365, -1, "ca.crt"),
      ],
      "ns",
      now,
    );
    expect(v.reason).toBe("CertificateExpired");
    expect(v.message).toMatch(
      /^the certificate in Secret ns\/demo-a-tls, key ca.crt \(spec.tls.client.certManager\) expired at 2026-05-31T00:00:00.000Z: it is the CA of Issuer etcd-ca: renew that CA/,
    );
    expect(v.message).toMatch(
      /; also Secret demo-a-tls key tls.crt \(expires at 2026-06-11T00:00:00.000Z\)$/,
    );
  });

  it("a cert-manager certificate not renewed: names its Certificate and issuer", () => {
    const v = judgeCertificates(
      [certManager("demo-operator-client-tls", "ClusterIssuer corp", -80, 10)],
      "ns",
      now,
    );
    expect(v.message).toMatch(
      /cert-manager has not renewed it: check Certificate ns\/demo-operator-client-tls \(kubectl describe certificate\) and ClusterIssuer corp$/,
    );
  });

  it("a renewal merely due (cert-manager, a third of the lifetime left) does not warn", () => {
    const v = judgeCertificates([cert(-60, 29, { renewer: "cert-manager" })], "ns", now);
    expect(v.status).toBe("True");
  });
});

describe("validityOf", () => {
  it("tls.crt: the first of the chain to expire; ca.crt: of the CAs, the one that signed it", async () => {
    const old = await createCA({ commonName: "old", now: at(-3000), validityMs: 3005 * DAY });
    const current = await createCA({ commonName: "current", now: at(-10), validityMs: 400 * DAY });
    const leaf = await issueCertificate(current, { hosts: ["x"], now: at(-1), validityMs: 30 * DAY });
    const data = { "tls.crt": leaf.cert, "ca.crt": `${old.cert}${current.cert}` };
    // Within minutes (createCA starts a minute early, for clock skew).
    const days = (v: { notAfter: Date } | undefined) =>
      Math.round(((v?.notAfter.getTime() ?? 0) - now.getTime()) / DAY);
    expect(days(validityOf("tls.crt", data))).toBe(29);
    expect(days(validityOf("ca.crt", data))).toBe(390);
    // Without a leaf it signed: the CA that expires last.
    expect(days(validityOf("ca.crt", { "ca.crt": `${current.cert}${old.cert}` }))).toBe(390);
    expect(validityOf("tls.crt", { "tls.crt": "not a certificate" })).toBeUndefined();
  });
});
