// The metrics server's certificates: the self-signed one, and one read from a directory and re-read on change.
import { createPrivateKey, X509Certificate } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../util/logger.ts";
import { type CertificatePair, CertWatcher, selfSignedCertificate } from "./serving-cert.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function certDir(pair?: CertificatePair): string {
  const dir = mkdtempSync(join(tmpdir(), "capstan-certs-"));
  dirs.push(dir);
  if (pair) writePair(dir, pair);
  return dir;
}

function writePair(dir: string, pair: CertificatePair): void {
  writeFileSync(join(dir, "tls.crt"), pair.cert);
  writeFileSync(join(dir, "tls.key"), pair.key);
}

describe("selfSignedCertificate", () => {
  it("makes a v3 server certificate for the given names and addresses, with its matching key", async () => {
    const { cert, key } = await selfSignedCertificate({
      hosts: ["localhost", "metrics.svc", "127.0.0.1", "::1"],
    });
    const x509 = new X509Certificate(cert);
    expect(x509.subjectAltName).toBe(
      "DNS:localhost, DNS:metrics.svc, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1",
    );
    expect(x509.subject).toBe("CN=localhost");
    expect(x509.issuer).toBe(x509.subject);
    expect(x509.ca).toBe(false);
    expect(x509.keyUsage).toEqual(["1.3.6.1.5.5.7.3.1"]); // extKeyUsage serverAuth
    expect(x509.checkPrivateKey(createPrivateKey(key))).toBe(true);
    expect(x509.verify(x509.publicKey)).toBe(true);
    expect(x509.checkHost("metrics.svc")).toBe("metrics.svc");
    expect(x509.checkIP("127.0.0.1")).toBe("127.0.0.1");
    const days = (Date.parse(x509.validTo) - Date.parse(x509.validFrom)) / 86_400_000;
    expect(days).toBe(365);
  });

  it("makes a different key and serial each time", async () => {
    const [a, b] = await Promise.all([selfSignedCertificate(), selfSignedCertificate()]);
    expect(a.key).not.toBe(b.key);
    expect(new X509Certificate(a.cert).serialNumber).not.toBe(new X509Certificate(b.cert).serialNumber);
  });
});

describe("CertWatcher", () => {
  it("says which file is missing and what to mount", () => {
    const dir = certDir();
    const w = new CertWatcher({ dir, onChange: () => {}, logger: silentLogger });
    expect(() => w.start()).toThrow(
      /cannot read the certificate .*tls\.crt.*mount a kubernetes.io\/tls Secret/,
    );
  });

  it("refuses a key that does not match the certificate", async () => {
    const a = await selfSignedCertificate();
    const b = await selfSignedCertificate();
    const dir = certDir({ cert: a.cert, key: b.key });
    const w = new CertWatcher({ dir, onChange: () => {}, logger: silentLogger });
    expect(() => w.start()).toThrow(/not a valid certificate and matching key/);
  });

  it("hands over a rotated pair, skips a half-written one, and ignores unchanged files", async () => {
    const a = await selfSignedCertificate();
    const b = await selfSignedCertificate();
    const c = await selfSignedCertificate();
    const dir = certDir(a);
    const seen: CertificatePair[] = [];
    const w = new CertWatcher({
      dir,
      certName: "tls.crt",
      keyName: "tls.key",
      pollIntervalMs: 3_600_000,
      onChange: (p) => seen.push(p),
      logger: silentLogger,
    });
    expect(w.start()).toEqual(a);
    try {
      w.reload();
      expect(seen).toEqual([]);
      writeFileSync(join(dir, "tls.crt"), b.cert); // the key is not written yet
      w.reload();
      expect(seen).toEqual([]);
      writeFileSync(join(dir, "tls.key"), b.key);
      w.reload();
      expect(seen).toEqual([b]);
      writePair(dir, c);
      w.reload();
      expect(seen).toEqual([b, c]);
    } finally {
      w.stop();
    }
  });
});
