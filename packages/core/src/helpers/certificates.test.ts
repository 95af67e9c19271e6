// The certificates helper: a CA and leaves it signs, checked by node:crypto and by a real mutual-TLS handshake.
import { execFileSync } from "node:child_process";
import { X509Certificate } from "node:crypto";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { connect, createServer } from "node:tls";
import { describe, expect, it } from "vitest";
import {
  type CertificatePair,
  certificateInfo,
  createCA,
  issueCertificate,
  renewalReason,
  signedBy,
  splitPemBundle,
} from "./certificates.ts";

const HOUR = 3_600_000;
const now = new Date("2026-01-01T00:00:00Z");

describe("createCA and issueCertificate", () => {
  it("issues a leaf with its names, usages and validity, signed by the CA", async () => {
    const ca = await createCA({ commonName: "demo CA", organization: "demo-operator", now });
    expect(new X509Certificate(ca.cert).ca).toBe(true);
    const leaf = await issueCertificate(ca, {
      hosts: ["m-1.peer.ns.svc", "localhost", "127.0.0.1", "::1"],
      usages: ["server", "client"],
      now,
      validityMs: 10 * 60_000,
    });
    const x = new X509Certificate(leaf.cert);
    expect(x.subjectAltName).toBe(
      "DNS:m-1.peer.ns.svc, DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1",
    );
    expect(x.keyUsage).toEqual(["1.3.6.1.5.5.7.3.1", "1.3.6.1.5.5.7.3.2"]);
    expect(x.ca).toBe(false);
    expect(signedBy(leaf.cert, ca.cert)).toBe(true);
    const info = certificateInfo(leaf.cert);
    expect(info?.commonName).toBe("m-1.peer.ns.svc");
    expect(info?.hosts).toEqual(["m-1.peer.ns.svc", "localhost", "127.0.0.1", "::1"]);
    expect(info?.notAfter.toISOString()).toBe("2026-01-01T00:10:00.000Z");
    expect(info?.notBefore.toISOString()).toBe("2025-12-31T23:59:00.000Z");
  });

  it("a client certificate: no names, a common name, clientAuth only", async () => {
    const ca = await createCA({ commonName: "demo CA", now });
    const client = await issueCertificate(ca, {
      hosts: [],
      commonName: "etcd-operator",
      usages: ["client"],
      now,
      validityMs: HOUR,
    });
    const x = new X509Certificate(client.cert);
    expect(x.subject).toBe("CN=etcd-operator");
    expect(x.subjectAltName).toBeUndefined();
    expect(x.keyUsage).toEqual(["1.3.6.1.5.5.7.3.2"]);
  });

  it("every certificate is DER that OpenSSL parses and verifies (600 leaves: a 1-in-256 flaw would show)", async () => {
    const ca = await createCA({ commonName: "serials" });
    const refused: string[] = [];
    for (let i = 0; i < 600; i++) {
      const leaf = await issueCertificate(ca, { hosts: ["a"], validityMs: 3_600_000 });
      try {
        if (!new X509Certificate(leaf.cert).verify(new X509Certificate(ca.cert).publicKey))
          refused.push("signature");
      } catch (err) {
        refused.push((err as Error).message);
      }
    }
    expect(refused).toEqual([]);
  });

  it("signedBy accepts a bundle holding the issuer and refuses a foreign CA", async () => {
    const [a, b] = await Promise.all([
      createCA({ commonName: "a", now }),
      createCA({ commonName: "b", now }),
    ]);
    const leaf = await issueCertificate(a, { hosts: ["x"], now, validityMs: HOUR });
    expect(signedBy(leaf.cert, b.cert)).toBe(false);
    expect(signedBy(leaf.cert, b.cert + a.cert)).toBe(true);
    expect(splitPemBundle(b.cert + a.cert)).toEqual([b.cert, a.cert]);
  });
});

describe("renewalReason", async () => {
  const ca = await createCA({ commonName: "demo CA", now });
  const other = await createCA({ commonName: "other CA", now });
  const hosts = ["demo.ns.svc", "127.0.0.1", "::1", "fd00:0:0::1"];
  const cert = await issueCertificate(ca, { hosts, now, validityMs: 100 * HOUR });
  const foreign = await issueCertificate(other, { hosts, now, validityMs: 100 * HOUR });
  const at = (hours: number) => new Date(now.getTime() + hours * HOUR);
  it.each([
    ["missing", undefined, hosts, at(0), /no peer certificate yet/],
    ["fresh", cert, hosts, at(0), undefined],
    ["just outside renewBefore", cert, hosts, at(69), undefined],
    ["inside renewBefore", cert, hosts, at(71), /the peer certificate expires .* within renewBefore/],
    ["a name was added", cert, [...hosts, "demo-4.ns.svc"], at(0), /does not name demo-4/],
    ["signed by another CA", foreign, hosts, at(0), /not signed by the current CA/],
    ["garbage", { cert: "x", key: "y" }, hosts, at(0), /cannot be parsed/],
  ] as const)("%s", (_name, current, want, when, expected) => {
    const reason = renewalReason(current as CertificatePair | undefined, {
      ca: ca.cert,
      hosts: want,
      now: when,
      renewBeforeMs: 30 * HOUR,
      what: "the peer certificate",
    });
    if (expected === undefined) expect(reason).toBeUndefined();
    else expect(reason).toMatch(expected);
  });
});

describe("a real mutual-TLS handshake", () => {
  /** Connects with `client` (or none) to a server requiring a client certificate of `ca`; resolves the outcome. */
  async function handshake(ca: CertificatePair, server: CertificatePair, client?: CertificatePair) {
    const srv = createServer(
      { ...server, ca: ca.cert, requestCert: true, rejectUnauthorized: true },
      (socket) => socket.end("hello"),
    );
    await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
    const { port } = srv.address() as AddressInfo;
    try {
      return await new Promise<string>((resolve) => {
        const socket = connect({ host: "127.0.0.1", port, ca: ca.cert, servername: "localhost", ...client });
        let data = "";
        socket.on("data", (d) => {
          data += d;
        });
        socket.on("end", () => resolve(data === "hello" ? "ok" : "refused"));
        socket.on("error", () => resolve("refused"));
      });
    } finally {
      srv.close();
    }
  }

  it("succeeds with a client certificate of the CA, and is refused without one or with a foreign one", async () => {
    const ca = await createCA({ commonName: "demo CA" });
    const other = await createCA({ commonName: "other CA" });
    const server = await issueCertificate(ca, { hosts: ["localhost"], usages: ["server"], validityMs: HOUR });
    const client = await issueCertificate(ca, {
      hosts: [],
      commonName: "c",
      usages: ["client"],
      validityMs: HOUR,
    });
    const foreign = await issueCertificate(other, { hosts: [], usages: ["client"], validityMs: HOUR });
    expect(await handshake(ca, server, client)).toBe("ok");
    expect(await handshake(ca, server)).toBe("refused");
    expect(await handshake(ca, server, foreign)).toBe("refused");
  });
});

describe("module loading", () => {
  it("importing @capstan/core loads pkijs and asn1js only when the first certificate is made", () => {
    // A fresh process that records what resolves while core's public API loads, then makes a certificate.
    const script = `
      import { registerHooks } from "node:module";
      const x509 = [];
      registerHooks({
        resolve(specifier, context, next) {
          if (specifier === "pkijs" || specifier === "asn1js") x509.push(specifier);
          return next(specifier, context);
        },
      });
      const core = await import(${JSON.stringify(join(import.meta.dirname, "..", "index.ts"))});
      const atImport = [...x509];
      const pair = await core.createCA({ commonName: "module loading" });
      console.log(JSON.stringify({ atImport, afterFirst: [...new Set(x509)].sort(), made: pair.cert.startsWith("-----BEGIN CERTIFICATE") }));
    `;
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
    expect(JSON.parse(out.trim().split("\n").at(-1) ?? "")).toEqual({
      atImport: [],
      afterFirst: ["asn1js", "pkijs"],
      made: true,
    });
  });
});
