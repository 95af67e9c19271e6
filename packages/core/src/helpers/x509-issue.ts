// Makes X.509 certificates: pkijs builds the structures, WebCrypto makes and signs with ECDSA P-256 keys.
// Loaded by certificates.ts when the first certificate is made (see there); import that module, not this one.
import { randomBytes, webcrypto } from "node:crypto";
import { isIP } from "node:net";
import * as asn1js from "asn1js";
import * as pkijs from "pkijs";
import {
  CA_VALIDITY_MS,
  type CertificatePair,
  type CertificateUsage,
  type CreateCAOptions,
  type IssueOptions,
  type SelfSignedOptions,
} from "./certificate-options.ts";

/** Certificates start a minute before "now", so a peer whose clock is a little behind accepts them. */
const CLOCK_SKEW_MS = 60_000;

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

const USAGE_OID: Record<CertificateUsage, string> = { server: OID.serverAuth, client: OID.clientAuth };

const ALGORITHM = { name: "ECDSA", namedCurve: "P-256" };

function pem(label: string, der: ArrayBuffer): string {
  const b64 = Buffer.from(der).toString("base64");
  return `-----BEGIN ${label}-----\n${b64.replace(/.{64}/g, "$&\n").replace(/\n?$/, "\n")}-----END ${label}-----\n`;
}

/** The DER bytes of the first PEM block in `text`. */
function derOf(text: string): ArrayBuffer {
  const block = /-----BEGIN [^-]+-----([^-]+)-----END [^-]+-----/.exec(text)?.[1] ?? "";
  const buf = Buffer.from(block.replace(/\s+/g, ""), "base64");
  return buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
}

/** IPv4 or IPv6 text as the bytes of a GeneralName iPAddress. */
function ipBytes(ip: string): ArrayBuffer {
  if (isIP(ip) === 4) return new Uint8Array(ip.split(".").map(Number)).buffer;
  const [head = "", tail = ""] = ip.split("::");
  const groups = (s: string) => (s === "" ? [] : s.split(":"));
  const h = groups(head);
  const t = groups(tail);
  const all = ip.includes("::") ? [...h, ...Array(8 - h.length - t.length).fill("0"), ...t] : h;
  const out = new Uint8Array(16);
  all.forEach((g, i) => {
    const v = Number.parseInt(g, 16);
    out[i * 2] = v >> 8;
    out[i * 2 + 1] = v & 0xff;
  });
  return out.buffer;
}

function extension(extnID: string, critical: boolean, value: asn1js.AsnType) {
  return new pkijs.Extension({ extnID, critical, extnValue: value.toBER(false) });
}

function distinguishedName(commonName: string, organization?: string): pkijs.RelativeDistinguishedNames {
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
  authorityKeyId: ArrayBuffer | undefined,
): Promise<string> {
  const cert = new pkijs.Certificate();
  cert.version = 2; // X.509 v3
  const serial = randomBytes(16);
  // A positive INTEGER in minimal DER: a first byte of 0x00 followed by one below 0x80 is "illegal padding"
  // that OpenSSL and Go refuse to parse (1 serial in 256 was, before 2026-12-02).
  serial[0] = ((serial[0] ?? 0) & 0x3f) | 0x40;
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
    ...(authorityKeyId === undefined
      ? []
      : [
          extension(
            OID.authorityKeyIdentifier,
            false,
            new pkijs.AuthorityKeyIdentifier({
              keyIdentifier: new asn1js.OctetString({ valueHex: authorityKeyId }),
            }).toSchema(),
          ),
        ]),
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

function leafExtensions(hosts: readonly string[], usages: readonly CertificateUsage[]): pkijs.Extension[] {
  // digitalSignature (bit 0): 0b10000000, 7 unused bits.
  const keyUsage = new asn1js.BitString({ valueHex: new Uint8Array([0x80]).buffer, unusedBits: 7 });
  const unique = [...new Set(hosts)];
  return [
    extension(OID.basicConstraints, true, new pkijs.BasicConstraints({ cA: false }).toSchema()),
    extension(OID.keyUsage, true, keyUsage),
    extension(
      OID.extKeyUsage,
      false,
      new pkijs.ExtKeyUsage({ keyPurposes: [...new Set(usages)].map((u) => USAGE_OID[u]) }).toSchema(),
    ),
    ...(unique.length === 0
      ? []
      : [
          extension(
            OID.subjectAltName,
            false,
            new pkijs.GeneralNames({
              names: unique.map((h) =>
                isIP(h) === 0
                  ? new pkijs.GeneralName({ type: 2, value: h })
                  : new pkijs.GeneralName({
                      type: 7,
                      value: new asn1js.OctetString({ valueHex: ipBytes(h) }),
                    }),
              ),
            }).toSchema(),
          ),
        ]),
  ];
}

/** A self-signed CA (keyCertSign, pathLen 0) valid from `now` (a minute earlier, for clock skew). */
export async function createCA(options: CreateCAOptions): Promise<CertificatePair> {
  const keys = await newKeys();
  const subject = distinguishedName(options.commonName, options.organization);
  const notBefore = new Date((options.now ?? new Date()).getTime() - CLOCK_SKEW_MS);
  // keyCertSign (bit 5) and cRLSign (bit 6): 0b00000110, 1 unused bit.
  const usage = new asn1js.BitString({ valueHex: new Uint8Array([0x06]).buffer, unusedBits: 1 });
  const cert = await sign(
    {
      subject,
      notBefore,
      notAfter: new Date(notBefore.getTime() + (options.validityMs ?? CA_VALIDITY_MS)),
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

/** A leaf certificate signed by `ca` (a pair from {@link createCA}, or any ECDSA P-256 CA). */
export async function issueCertificate(ca: CertificatePair, options: IssueOptions): Promise<CertificatePair> {
  const caCert = pkijs.Certificate.fromBER(derOf(ca.cert));
  let caKey: webcrypto.CryptoKey;
  try {
    caKey = await webcrypto.subtle.importKey("pkcs8", derOf(ca.key), ALGORITHM, false, ["sign"]);
  } catch (err) {
    throw new Error(
      `issueCertificate: the CA key is not an ECDSA P-256 PKCS#8 key (${(err as Error).message}); give a CA made by createCA`,
    );
  }
  const keys = await newKeys();
  const now = options.now ?? new Date();
  const commonName =
    options.commonName ?? options.hosts.find((h) => isIP(h) === 0) ?? options.hosts[0] ?? "capstan";
  const cert = await sign(
    {
      subject: distinguishedName(commonName),
      notBefore: new Date(now.getTime() - CLOCK_SKEW_MS),
      notAfter: new Date(now.getTime() + options.validityMs),
      extensions: leafExtensions(options.hosts, options.usages ?? ["server", "client"]),
    },
    keys.publicKey,
    caCert.subject,
    caKey,
    await keyIdentifier(await caCert.getPublicKey()),
  );
  return { cert, key: await exportKey(keys.privateKey) };
}

/** A self-signed server certificate for `hosts` (no CA: each client trusts it as is, or skips verification). */
export async function selfSignedCertificate(options: SelfSignedOptions): Promise<CertificatePair> {
  const keys = await newKeys();
  const subject = distinguishedName(options.hosts.find((h) => isIP(h) === 0) ?? "localhost");
  const notBefore = new Date((options.now ?? new Date()).getTime() - CLOCK_SKEW_MS);
  const cert = await sign(
    {
      subject,
      notBefore,
      notAfter: new Date(notBefore.getTime() + options.validityMs),
      extensions: leafExtensions(options.hosts, ["server"]),
    },
    keys.publicKey,
    subject,
    keys.privateKey,
    undefined,
  );
  return { cert, key: await exportKey(keys.privateKey) };
}
