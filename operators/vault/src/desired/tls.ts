// The listener certificates of a VaultCluster: a CA and a server certificate it signs (pkijs builds the X.509
// structures, WebCrypto makes and signs with ECDSA P-256 keys), read back with node:crypto's X509Certificate, and
// the rule for when to renew. Go durations (spec.tls.duration/renewBefore) are parsed here too.
import { randomBytes, webcrypto, X509Certificate } from "node:crypto";
import { isIP } from "node:net";
import * as asn1js from "asn1js";
import * as pkijs from "pkijs";

/** A PEM certificate and its PEM (PKCS#8) private key. */
export interface CertificatePair {
  cert: string;
  key: string;
}

/** Lifetime of the operator-managed CA: ten years (the server certificate is what rotates). */
export const CA_DURATION_MS = 10 * 365 * 86_400_000;

const OID = {
  commonName: "2.5.4.3",
  organization: "2.5.4.10",
  basicConstraints: "2.5.29.19",
  keyUsage: "2.5.29.15",
  extKeyUsage: "2.5.29.37",
  subjectAltName: "2.5.29.17",
  subjectKeyIdentifier: "2.5.29.14",
  authorityKeyIdentifier: "2.5.29.35",
  serverAuth: "1.3.6.1.5.5.7.3.1",
  clientAuth: "1.3.6.1.5.5.7.3.2",
};

const ALGORITHM = { name: "ECDSA", namedCurve: "P-256" };

const GO_UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Milliseconds of a Go duration such as "2160h" or "1h30m"; throws on anything else. */
export function parseGoDuration(text: string): number {
  const re = /([0-9]+(?:\.[0-9]+)?)(ns|us|ms|s|m|h)/gy;
  let total = 0;
  let end = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    total += Number(m[1]) * (GO_UNITS[m[2] ?? ""] ?? 0);
    end = re.lastIndex;
  }
  if (text === "" || end !== text.length) {
    throw new Error(`"${text}" is not a Go duration such as 2160h or 1h30m`);
  }
  return total;
}

function pem(label: string, der: ArrayBuffer): string {
  const b64 = Buffer.from(der).toString("base64");
  return `-----BEGIN ${label}-----\n${b64.replace(/.{64}/g, "$&\n").replace(/\n?$/, "\n")}-----END ${label}-----\n`;
}

function derOf(text: string): ArrayBuffer {
  const b64 = text.replace(/-----[^-]+-----/g, "").replace(/\s+/g, "");
  const buf = Buffer.from(b64, "base64");
  return buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
}

function ipv4Bytes(ip: string): ArrayBuffer {
  return new Uint8Array(ip.split(".").map(Number)).buffer;
}

function extension(extnID: string, critical: boolean, value: asn1js.AsnType) {
  return new pkijs.Extension({ extnID, critical, extnValue: value.toBER(false) });
}

function name(commonName: string, organization?: string): pkijs.RelativeDistinguishedNames {
  const rdn = new pkijs.RelativeDistinguishedNames();
  if (organization !== undefined) {
    rdn.typesAndValues.push(
      new pkijs.AttributeTypeAndValue({
        type: OID.organization,
        value: new asn1js.Utf8String({ value: organization }),
      }),
    );
  }
  rdn.typesAndValues.push(
    new pkijs.AttributeTypeAndValue({
      type: OID.commonName,
      value: new asn1js.Utf8String({ value: commonName }),
    }),
  );
  return rdn;
}

async function keyIdentifier(key: webcrypto.CryptoKey): Promise<ArrayBuffer> {
  const spki = await webcrypto.subtle.exportKey("spki", key);
  return (await webcrypto.subtle.digest("SHA-1", spki)).slice(0, 20);
}

interface Draft {
  subject: pkijs.RelativeDistinguishedNames;
  notBefore: Date;
  notAfter: Date;
  extensions: pkijs.Extension[];
}

async function sign(
  draft: Draft,
  publicKey: webcrypto.CryptoKey,
  issuer: pkijs.RelativeDistinguishedNames,
  issuerKey: webcrypto.CryptoKey,
  authorityKeyId: ArrayBuffer,
): Promise<string> {
  const cert = new pkijs.Certificate();
  cert.version = 2;
  const serial = randomBytes(16);
  serial[0] = (serial[0] ?? 0) & 0x7f;
  cert.serialNumber = new asn1js.Integer({ valueHex: serial });
  cert.subject = draft.subject;
  cert.issuer = issuer;
  cert.notBefore.value = draft.notBefore;
  cert.notAfter.value = draft.notAfter;
  await cert.subjectPublicKeyInfo.importKey(publicKey);
  cert.extensions = [
    ...draft.extensions,
    extension(
      OID.subjectKeyIdentifier,
      false,
      new asn1js.OctetString({ valueHex: await keyIdentifier(publicKey) }),
    ),
    extension(
      OID.authorityKeyIdentifier,
      false,
      new pkijs.AuthorityKeyIdentifier({
        keyIdentifier: new asn1js.OctetString({ valueHex: authorityKeyId }),
      }).toSchema(),
    ),
  ];
  await cert.sign(issuerKey, "SHA-256");
  return pem("CERTIFICATE", cert.toSchema(true).toBER(false));
}

async function newKeys(): Promise<webcrypto.CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(ALGORITHM, true, ["sign", "verify"])) as webcrypto.CryptoKeyPair;
}

async function exportKey(key: webcrypto.CryptoKey): Promise<string> {
  return pem("PRIVATE KEY", await webcrypto.subtle.exportKey("pkcs8", key));
}

/** A self-signed CA (keyCertSign) named `commonName`, valid from `now` (a minute earlier, for clock skew). */
export async function createCA(
  commonName: string,
  now: Date,
  durationMs = CA_DURATION_MS,
): Promise<CertificatePair> {
  const keys = await newKeys();
  const subject = name(commonName, "capstan-vault-operator");
  const notBefore = new Date(now.getTime() - 60_000);
  // keyCertSign (bit 5) and cRLSign (bit 6): 0b00000110, 1 unused bit.
  const usage = new asn1js.BitString({ valueHex: new Uint8Array([0x06]).buffer, unusedBits: 1 });
  const cert = await sign(
    {
      subject,
      notBefore,
      notAfter: new Date(notBefore.getTime() + durationMs),
      extensions: [
        extension(
          OID.basicConstraints,
          true,
          new pkijs.BasicConstraints({ cA: true, pathLenConstraint: 0 }).toSchema(),
        ),
        extension(OID.keyUsage, true, usage),
      ],
    },
    keys.publicKey,
    subject,
    keys.privateKey,
    await keyIdentifier(keys.publicKey),
  );
  return { cert, key: await exportKey(keys.privateKey) };
}

/**
 * A server (and client) certificate for `hosts` (DNS names and IPv4 addresses), signed by `ca`, valid for
 * `durationMs` from `now`.
 */
export async function issueServerCertificate(
  ca: CertificatePair,
  hosts: readonly string[],
  now: Date,
  durationMs: number,
): Promise<CertificatePair> {
  const caCert = pkijs.Certificate.fromBER(derOf(ca.cert));
  const caKey = await webcrypto.subtle.importKey("pkcs8", derOf(ca.key), ALGORITHM, false, ["sign"]);
  const caPublic = await caCert.getPublicKey();
  const keys = await newKeys();
  const unique = [...new Set(hosts)];
  const altNames = new pkijs.GeneralNames({
    names: unique.map((h) =>
      isIP(h) === 4
        ? new pkijs.GeneralName({ type: 7, value: new asn1js.OctetString({ valueHex: ipv4Bytes(h) }) })
        : new pkijs.GeneralName({ type: 2, value: h }),
    ),
  });
  // digitalSignature (bit 0): 0b10000000, 7 unused bits.
  const usage = new asn1js.BitString({ valueHex: new Uint8Array([0x80]).buffer, unusedBits: 7 });
  const notBefore = new Date(now.getTime() - 60_000);
  const cert = await sign(
    {
      subject: name(unique.find((h) => isIP(h) === 0) ?? "vault"),
      notBefore,
      notAfter: new Date(now.getTime() + durationMs),
      extensions: [
        extension(OID.basicConstraints, true, new pkijs.BasicConstraints({ cA: false }).toSchema()),
        extension(OID.keyUsage, true, usage),
        extension(
          OID.extKeyUsage,
          false,
          new pkijs.ExtKeyUsage({ keyPurposes: [OID.serverAuth, OID.clientAuth] }).toSchema(),
        ),
        extension(OID.subjectAltName, false, altNames.toSchema()),
      ],
    },
    keys.publicKey,
    caCert.subject,
    caKey,
    await keyIdentifier(caPublic),
  );
  return { cert, key: await exportKey(keys.privateKey) };
}

/** What the operator reads from a served certificate. */
export interface CertificateInfo {
  notAfter: Date;
  /** DNS names and IP addresses of its subjectAltName. */
  hosts: string[];
  /** SHA-256 of the certificate (DER), lower-case hex: names this certificate among its renewals. */
  fingerprint: string;
}

/** The expiry and names of the first certificate in `pem`, or undefined when it cannot be parsed. */
export function certificateInfo(text: string): CertificateInfo | undefined {
  try {
    const x = new X509Certificate(text);
    const hosts = (x.subjectAltName ?? "")
      .split(", ")
      .map((s) => /^(?:DNS|IP Address):(.*)$/.exec(s)?.[1])
      .filter((h) => h !== undefined);
    return {
      notAfter: new Date(x.validTo),
      hosts,
      fingerprint: x.fingerprint256.replaceAll(":", "").toLowerCase(),
    };
  } catch {
    return undefined;
  }
}

/** True when `certPem` was signed by the CA in `caPem`. */
export function signedBy(certPem: string, caPem: string): boolean {
  try {
    const cert = new X509Certificate(certPem);
    const ca = new X509Certificate(caPem);
    return cert.checkIssued(ca) && cert.verify(ca.publicKey);
  } catch {
    return false;
  }
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
  if (current === undefined) return "no server certificate yet";
  const info = certificateInfo(current.cert);
  if (info === undefined) return "the server certificate cannot be parsed";
  if (!signedBy(current.cert, caPem)) return "the server certificate is not signed by the current CA";
  const missing = hosts.filter((h) => !info.hosts.includes(h));
  if (missing.length > 0) return `the server certificate does not name ${missing.join(", ")}`;
  const left = info.notAfter.getTime() - now.getTime();
  if (left < renewBeforeMs) {
    return `the server certificate expires at ${info.notAfter.toISOString()}, within renewBefore`;
  }
  return undefined;
}
