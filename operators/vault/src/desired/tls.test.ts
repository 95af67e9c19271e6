// The CA and server certificates are real X.509 that Node's TLS stack accepts for the names they carry, and the
// renewal rule fires exactly when it should.
import { once } from "node:events";
import { connect, createServer } from "node:tls";
import { describe, expect, it } from "vitest";
import {
  certificateInfo,
  createCA,
  issueServerCertificate,
  parseGoDuration,
  renewalReason,
  signedBy,
  trustBundle,
} from "./tls.ts";

const now = new Date("2026-12-01T12:00:00Z");
const HOUR = 3_600_000;

describe("parseGoDuration", () => {
  it.each([
    ["2160h", 2160 * HOUR],
    ["1h30m", 90 * 60_000],
    ["1.5h", 1.5 * HOUR],
    ["500ms", 500],
    ["10m", 600_000],
  ])("%s", (text, ms) => expect(parseGoDuration(text)).toBe(ms));
  it.each(["", "90d", "1h 30m", "h", "-1h"])("refuses %j", (text) =>
    expect(() => parseGoDuration(text)).toThrow(),
  );
});

describe("createCA and issueServerCertificate", () => {
  it("issue a chain Node's TLS client verifies for a pod DNS name dialled by IP", async () => {
    const start = new Date();
    const ca = await createCA("demo CA", start);
    const hosts = ["demo-0.demo-internal.ns.svc", "demo.ns.svc", "localhost", "127.0.0.1"];
    const server = await issueServerCertificate(ca, hosts, start, 24 * HOUR);
    expect(signedBy(server.cert, ca.cert)).toBe(true);
    expect(certificateInfo(server.cert)?.hosts).toEqual(hosts);

    const tls = createServer({ cert: server.cert, key: server.key }, (s) => s.end("ok"));
    tls.listen(0, "127.0.0.1");
    await once(tls, "listening");
    const port = (tls.address() as { port: number }).port;
    const read = (servername: string) =>
      new Promise<string>((resolve, reject) => {
        const c = connect({ host: "127.0.0.1", port, ca: ca.cert, servername }, () => undefined);
        let data = "";
        c.on("data", (d) => (data += d));
        c.on("end", () => resolve(data));
        c.on("error", reject);
      });
    try {
      expect(await read("demo-0.demo-internal.ns.svc")).toBe("ok");
      await expect(read("other.ns.svc")).rejects.toThrow(/altnames|Hostname/);
    } finally {
      tls.close();
    }
  });

  it("a certificate from another CA is not signedBy this one", async () => {
    const a = await createCA("a", now);
    const b = await createCA("b", now);
    const cert = await issueServerCertificate(a, ["x"], now, HOUR);
    expect(signedBy(cert.cert, a.cert)).toBe(true);
    expect(signedBy(cert.cert, b.cert)).toBe(false);
  });
});

describe("renewalReason", async () => {
  const ca = await createCA("demo CA", now);
  const other = await createCA("other CA", now);
  const hosts = ["demo.ns.svc", "127.0.0.1"];
  const cert = await issueServerCertificate(ca, hosts, now, 100 * HOUR);
  const foreign = await issueServerCertificate(other, hosts, now, 100 * HOUR);
  const at = (hours: number) => new Date(now.getTime() + hours * HOUR);

  it.each([
    ["missing", undefined, hosts, at(0), /no server certificate/],
    ["fresh", cert, hosts, at(0), undefined],
    ["just outside renewBefore", cert, hosts, at(69), undefined],
    ["inside renewBefore", cert, hosts, at(71), /within renewBefore/],
    ["expired", cert, hosts, at(200), /within renewBefore/],
    [
      "a name was added (scale-out)",
      cert,
      [...hosts, "demo-4.demo-internal.ns.svc"],
      at(0),
      /does not name demo-4/,
    ],
    ["signed by another CA", foreign, hosts, at(0), /not signed by the current CA/],
    ["garbage", { cert: "x", key: "y" }, hosts, at(0), /cannot be parsed/],
  ] as const)("%s", (_name, current, want, when, expected) => {
    const reason = renewalReason(current, ca.cert, want, when, 30 * HOUR);
    if (expected === undefined) expect(reason).toBeUndefined();
    else expect(reason).toMatch(expected);
  });
});

describe("trustBundle", () => {
  it("the CAs of both certificate sources during a switch, each once; one CA is passed as it is", async () => {
    const a = await createCA("a", now);
    const b = await createCA("b", now);
    const bundle = trustBundle([b.cert, a.cert, `${b.cert}\n`]);
    expect(bundle.match(/BEGIN CERTIFICATE/g)).toHaveLength(2);
    expect(bundle).toContain(a.cert.trim());
    expect(bundle).toContain(b.cert.trim());
    expect(trustBundle([a.cert])).toBe(a.cert);
  });
});
