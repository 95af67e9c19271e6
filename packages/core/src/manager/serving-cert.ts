// The metrics server's TLS certificate: read from a directory (the tls.crt and tls.key of a mounted
// kubernetes.io/tls Secret, e.g. cert-manager's) and re-read when the files change, as controller-runtime's
// certwatcher does; or, without a directory, a self-signed one made at start (controller-runtime's default).
// Node's crypto makes keys but not certificates: pkijs builds the X.509 structure, WebCrypto signs it.
import { randomBytes, webcrypto } from "node:crypto";
import { type FSWatcher, readFileSync, watch } from "node:fs";
import { isIP } from "node:net";
import { hostname } from "node:os";
import { join } from "node:path";
import { createSecureContext } from "node:tls";
import * as asn1js from "asn1js";
import * as pkijs from "pkijs";
import type { Logger } from "../util/logger.ts";

/** A PEM certificate (chain) and its PEM private key. */
export interface CertificatePair {
  cert: string;
  key: string;
}

export interface SelfSignedOptions {
  /** DNS names and IP addresses the certificate names; default localhost, the hostname, 127.0.0.1, ::1. */
  hosts?: string[];
  /** Default 365 days. */
  validDays?: number;
}

const OID = {
  commonName: "2.5.4.3",
  basicConstraints: "2.5.29.19",
  keyUsage: "2.5.29.15",
  extKeyUsage: "2.5.29.37",
  subjectAltName: "2.5.29.17",
  serverAuth: "1.3.6.1.5.5.7.3.1",
};

function pem(label: string, der: ArrayBuffer): string {
  const b64 = Buffer.from(der).toString("base64");
  return `-----BEGIN ${label}-----\n${b64.replace(/.{64}/g, "$&\n").replace(/\n?$/, "\n")}-----END ${label}-----\n`;
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

function extension(extnID: string, critical: boolean, value: { toSchema(): asn1js.AsnType }) {
  return new pkijs.Extension({ extnID, critical, extnValue: value.toSchema().toBER(false) });
}

/** A self-signed ECDSA P-256 server certificate for `hosts` (names and IPs), valid from now. */
export async function selfSignedCertificate(options: SelfSignedOptions = {}): Promise<CertificatePair> {
  const hosts = options.hosts ?? ["localhost", hostname(), "127.0.0.1", "::1"];
  const validDays = options.validDays ?? 365;
  const algorithm = { name: "ECDSA", namedCurve: "P-256" };
  const keys = (await webcrypto.subtle.generateKey(algorithm, true, [
    "sign",
    "verify",
  ])) as webcrypto.CryptoKeyPair;

  const cert = new pkijs.Certificate();
  cert.version = 2; // X.509 v3
  const serial = randomBytes(16);
  serial[0] = (serial[0] ?? 0) & 0x7f; // a positive INTEGER
  cert.serialNumber = new asn1js.Integer({ valueHex: serial });
  const name = hosts.find((h) => isIP(h) === 0) ?? "localhost";
  for (const rdn of [cert.issuer, cert.subject]) {
    rdn.typesAndValues.push(
      new pkijs.AttributeTypeAndValue({
        type: OID.commonName,
        value: new asn1js.Utf8String({ value: name }),
      }),
    );
  }
  const notBefore = new Date(Date.now() - 60_000); // tolerate a little clock skew
  cert.notBefore.value = notBefore;
  cert.notAfter.value = new Date(notBefore.getTime() + validDays * 86_400_000);
  const altNames = new pkijs.GeneralNames({
    names: [...new Set(hosts)].map((h) =>
      isIP(h) === 0
        ? new pkijs.GeneralName({ type: 2, value: h })
        : new pkijs.GeneralName({ type: 7, value: new asn1js.OctetString({ valueHex: ipBytes(h) }) }),
    ),
  });
  // keyUsage digitalSignature: bit 0 of a BIT STRING, 7 unused bits.
  const keyUsage = new asn1js.BitString({ valueHex: new Uint8Array([0x80]).buffer, unusedBits: 7 });
  cert.extensions = [
    extension(OID.basicConstraints, true, new pkijs.BasicConstraints({ cA: false })),
    extension(OID.keyUsage, true, { toSchema: () => keyUsage }),
    extension(OID.extKeyUsage, false, new pkijs.ExtKeyUsage({ keyPurposes: [OID.serverAuth] })),
    extension(OID.subjectAltName, false, altNames),
  ];
  await cert.subjectPublicKeyInfo.importKey(keys.publicKey);
  await cert.sign(keys.privateKey, "SHA-256");
  const der = cert.toSchema(true).toBER(false);
  const pkcs8 = await webcrypto.subtle.exportKey("pkcs8", keys.privateKey);
  return { cert: pem("CERTIFICATE", der), key: pem("PRIVATE KEY", pkcs8) };
}

export interface CertWatcherOptions {
  dir: string;
  /** Default tls.crt. */
  certName?: string;
  /** Default tls.key. */
  keyName?: string;
  /** Called with each new valid pair after a change. */
  onChange: (pair: CertificatePair) => void;
  /** The files are also re-read this often (a watch can miss a Secret volume's symlink swap); default 10 s. */
  pollIntervalMs?: number;
  logger: Logger;
}

/** Reads a certificate and key from a directory, and re-reads them when they change. */
export class CertWatcher {
  private readonly certPath: string;
  private readonly keyPath: string;
  private readonly options: CertWatcherOptions;
  private current: CertificatePair | undefined;
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(options: CertWatcherOptions) {
    this.options = options;
    this.certPath = join(options.dir, options.certName ?? "tls.crt");
    this.keyPath = join(options.dir, options.keyName ?? "tls.key");
  }

  /** Reads and checks the pair (the key must match the certificate); throws saying which file is wrong. */
  read(): CertificatePair {
    const readPem = (path: string, what: string) => {
      try {
        return readFileSync(path, "utf8");
      } catch (err) {
        throw new Error(
          `metrics server: cannot read the ${what} ${path}: ${(err as Error).message} (mount a kubernetes.io/tls Secret there, or leave certDir unset for a self-signed certificate)`,
        );
      }
    };
    const pair = { cert: readPem(this.certPath, "certificate"), key: readPem(this.keyPath, "private key") };
    try {
      createSecureContext(pair);
    } catch (err) {
      throw new Error(
        `metrics server: ${this.certPath} and ${this.keyPath} are not a valid certificate and matching key: ${(err as Error).message}`,
      );
    }
    return pair;
  }

  /** Reads the pair now (throwing when it is unusable) and watches for changes; returns the pair. */
  start(): CertificatePair {
    this.current = this.read();
    try {
      this.watcher = watch(this.options.dir, { persistent: false }, () => this.reload());
      this.watcher.on("error", () => this.watcher?.close());
    } catch {
      // No fs.watch on this filesystem: polling alone notices the change.
    }
    this.timer = setInterval(() => this.reload(), this.options.pollIntervalMs ?? 10_000);
    this.timer.unref();
    return this.current;
  }

  stop(): void {
    this.watcher?.close();
    clearInterval(this.timer);
  }

  /** Re-reads the files; a changed, valid pair is handed to onChange, an invalid one is logged and skipped. */
  reload(): void {
    let pair: CertificatePair;
    try {
      pair = this.read();
    } catch (err) {
      // Mid-rotation (certificate written, key not yet) or removed: keep serving the last good pair.
      this.options.logger.warn({ err }, "metrics certificate unusable; keeping the previous one");
      return;
    }
    if (pair.cert === this.current?.cert && pair.key === this.current.key) return;
    this.current = pair;
    this.options.logger.info({ cert: this.certPath }, "metrics certificate reloaded");
    this.options.onChange(pair);
  }
}
