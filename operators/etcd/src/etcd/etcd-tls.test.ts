// etcd with the operator's TLS, against real etcd processes on 127.0.0.1 (skipped when the binary is missing): the
// flags tlsArgs writes, client certificate authentication, peer TLS with --peer-cert-allowed-cn, probes on the
// plain-HTTP metrics port, and what the renewal design rests on: etcd reads its certificate files at each
// handshake (a renewed tls.crt is served without a restart), while the trusted CA file is read once at start.
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { connect } from "node:tls";
import { type CertificatePair, certificateInfo, createCA, issueCertificate } from "@capstan/core";
import { freePort, waitFor } from "@capstan/testing";
import { Agent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { classifyEtcdFailure } from "../plan/quorum-evidence.ts";
import { EtcdClient, type EtcdClientTLS } from "./etcd-client.ts";
import { haveLocalEtcd, LocalEtcd, type LocalMemberSpec } from "./local-etcd.ts";

const available = haveLocalEtcd();
const HOUR = 3_600_000;
const MEMBER_CN = "demo-member";

/** Writes a Secret-like directory (ca.crt, tls.crt, tls.key) as the kubelet does: new files, then a rename. */
function writeTLSDir(dir: string, ca: string, pair: CertificatePair): void {
  mkdirSync(dir, { recursive: true });
  for (const [file, text] of [
    ["ca.crt", ca],
    ["tls.crt", pair.cert],
    ["tls.key", pair.key],
  ] as const) {
    writeFileSync(join(dir, `.${file}.new`), text, { mode: 0o600 });
    renameSync(join(dir, `.${file}.new`), join(dir, file));
  }
}

/** The flags desired/tls.ts's tlsArgs gives a member, with this test's directories. */
function tlsFlags(dir: string): string[] {
  return [
    "--client-cert-auth=true",
    `--trusted-ca-file=${dir}/ca.crt`,
    `--cert-file=${dir}/tls.crt`,
    `--key-file=${dir}/tls.key`,
    "--peer-client-cert-auth=true",
    `--peer-trusted-ca-file=${dir}/ca.crt`,
    `--peer-cert-file=${dir}/tls.crt`,
    `--peer-key-file=${dir}/tls.key`,
    `--peer-cert-allowed-cn=${MEMBER_CN}`,
  ];
}

/** The fingerprint of the certificate served at `port`, presenting `client`; or the error's text. */
function servedFingerprint(port: number, ca: string, client?: CertificatePair): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({
      host: "127.0.0.1",
      port,
      ca,
      ...client,
      checkServerIdentity: () => undefined,
    });
    socket.on("secureConnect", () => {
      const fp = socket.getPeerCertificate().fingerprint256.replaceAll(":", "").toLowerCase();
      socket.end();
      resolve(fp);
    });
    socket.on("error", (err) => resolve(`error: ${err.message}`));
  });
}

/** A range request to `url` with these TLS options: "ok", or "refused: <why>" (TLS 1.3 refuses after the handshake). */
async function tryRange(url: string, tls: { ca: string; cert?: string; key?: string }): Promise<string> {
  const dispatcher = new Agent({ connect: { ...tls, checkServerIdentity: () => undefined } });
  try {
    const res = await request(`${url}/v3/kv/range`, {
      method: "POST",
      body: JSON.stringify({ key: Buffer.from("tls-key").toString("base64") }),
      dispatcher,
    });
    await res.body.text();
    return res.statusCode === 200 ? "ok" : `refused: HTTP ${res.statusCode}`;
  } catch (err) {
    return `refused: ${(err as Error).message}`;
  } finally {
    await dispatcher.close();
  }
}

describe.skipIf(!available)("etcd with operator-issued TLS (real etcd)", () => {
  let etcd: LocalEtcd;
  let ca: CertificatePair;
  let operatorTLS: EtcdClientTLS;
  const members: (LocalMemberSpec & { dir: string; metricsURL: string })[] = [];

  async function allocate(name: string) {
    const spec = {
      name,
      clientURL: `https://127.0.0.1:${await freePort()}`,
      peerURL: `https://127.0.0.1:${await freePort()}`,
      dir: join(etcd.dir, `${name}-tls`),
      metricsURL: `http://127.0.0.1:${await freePort()}`,
    };
    const pair = await issueCertificate(ca, {
      hosts: ["localhost", "127.0.0.1", "::1"],
      commonName: MEMBER_CN,
      usages: ["server", "client"],
      validityMs: HOUR,
    });
    writeTLSDir(spec.dir, ca.cert, pair);
    members.push(spec);
    return spec;
  }

  beforeAll(async () => {
    etcd = await LocalEtcd.create();
    ca = await createCA({ commonName: "demo etcd CA" });
    const client = await issueCertificate(ca, {
      hosts: [],
      commonName: "capstan-etcd-operator",
      usages: ["client"],
      validityMs: HOUR,
    });
    operatorTLS = { ca: ca.cert, ...client };
    const seed = await allocate("m0");
    etcd.start(seed, [seed], "new", [...tlsFlags(seed.dir), `--listen-metrics-urls=${seed.metricsURL}`]);
    const c = new EtcdClient({ endpoints: [seed.clientURL], tls: operatorTLS, timeoutMs: 10_000 });
    await waitFor(
      "m0 ready over TLS",
      async () => ((await c.health(seed.clientURL)).healthy ? true : undefined),
      100_000, // etcd starting on a loaded 2-core machine, next to the other real-etcd suites
    );
  }, 120_000);

  afterAll(async () => {
    await etcd?.stop();
  });

  it("serves the operator's client certificate, and refuses a client without one or with a foreign one", async () => {
    const [seed] = members;
    const client = new EtcdClient({ endpoints: [seed!.clientURL], tls: operatorTLS });
    await client.put("tls-key", "v1");
    expect(await client.get("tls-key")).toBe("v1");

    const other = await createCA({ commonName: "other CA" });
    const foreign = await issueCertificate(other, { hosts: [], usages: ["client"], validityMs: HOUR });
    const stranger = new EtcdClient({ endpoints: [seed!.clientURL], tls: { ca: ca.cert, ...foreign } });
    await expect(stranger.get("tls-key")).rejects.toThrow(/no etcd endpoint answered/);
    expect(await tryRange(seed!.clientURL, { ca: ca.cert })).toMatch(/^refused: /);
    expect(await tryRange(seed!.clientURL, { ca: ca.cert, ...foreign })).toMatch(/^refused: /);
    expect(await tryRange(seed!.clientURL, operatorTLS)).toBe("ok");
  });

  it("the operator's TLS failures, as etcd and Node.js word them, are read as TLS failures, never as an unreachable member (issue 27)", async () => {
    const [seed] = members;
    const other = await createCA({ commonName: "other CA" });
    const foreign = await issueCertificate(other, { hosts: [], usages: ["client"], validityMs: HOUR });
    const failures = [
      // A client certificate of another CA (TLS 1.3: etcd refuses it after the handshake).
      new EtcdClient({ endpoints: [seed!.clientURL], tls: { ca: ca.cert, ...foreign } }),
      // The operator does not trust the members' CA.
      new EtcdClient({ endpoints: [seed!.clientURL], tls: { ca: other.cert, ...foreign } }),
    ];
    for (const client of failures) {
      const error = await client.memberList().catch((err: unknown) => err);
      expect(error).toBeInstanceOf(Error);
      expect([(error as Error).message, classifyEtcdFailure((error as Error).message)]).toEqual([
        (error as Error).message,
        "tls",
      ]);
    }
  });

  it("answers /livez and /readyz on the plain-HTTP metrics port (the probes' port with client TLS)", async () => {
    const [seed] = members;
    for (const path of ["/livez", "/readyz"]) {
      const res = await request(`${seed!.metricsURL}${path}`);
      expect([path, res.statusCode, (await res.body.text()).trim()]).toEqual([path, 200, "ok"]);
    }
  });

  it("a learner joins over peer TLS and is promoted", async () => {
    const [seed] = members;
    const client = new EtcdClient({ endpoints: [seed!.clientURL], tls: operatorTLS, timeoutMs: 10_000 });
    const joiner = await allocate("m1");
    const added = await client.memberAddAsLearner([joiner.peerURL]);
    etcd.start(joiner, [seed!, joiner], "existing", [
      ...tlsFlags(joiner.dir),
      `--listen-metrics-urls=${joiner.metricsURL}`,
    ]);
    await waitFor(
      "m1 promoted",
      async () => {
        await client.memberPromote(added.id).catch(() => undefined);
        const { members: list } = await client.memberList();
        return list.some((m) => m.name === "m1" && !m.isLearner) ? true : undefined;
      },
      100_000,
    );
    const both = new EtcdClient({ endpoints: [joiner.clientURL], tls: operatorTLS });
    expect(await both.get("tls-key")).toBe("v1");
  }, 120_000);

  it("serves a renewed certificate at the next handshake, without a restart", async () => {
    const [seed] = members;
    const port = Number(new URL(seed!.clientURL).port);
    const client = { cert: operatorTLS.cert, key: operatorTLS.key };
    const before = await servedFingerprint(port, ca.cert, client);
    const renewed = await issueCertificate(ca, {
      hosts: ["localhost", "127.0.0.1", "::1"],
      commonName: MEMBER_CN,
      usages: ["server", "client"],
      validityMs: 2 * HOUR,
    });
    writeTLSDir(seed!.dir, ca.cert, renewed);
    const after = await servedFingerprint(port, ca.cert, client);
    expect(before).toMatch(/^[0-9a-f]{64}$/);
    expect(after).toBe(certificateInfo(renewed.cert)?.fingerprint);
    expect(etcd.members.find((m) => m.name === "m0")?.process.exitCode).toBeNull();
  });

  it("reads the trusted CA file only at start: a client of a CA added to the bundle later is refused (so a CA rotation rolls the members)", async () => {
    const [seed] = members;
    const next = await createCA({ commonName: "next etcd CA" });
    const nextClient = await issueCertificate(next, { hosts: [], usages: ["client"], validityMs: HOUR });
    const renewedDir = seed!.dir;
    const current = { cert: "", key: "" };
    // Keep the served pair, add the new CA to the bundle the member trusts.
    const { readFileSync } = await import("node:fs");
    current.cert = readFileSync(join(renewedDir, "tls.crt"), "utf8");
    current.key = readFileSync(join(renewedDir, "tls.key"), "utf8");
    writeTLSDir(renewedDir, ca.cert + next.cert, current);
    // What the CA rotation design assumes (members are rolled one at a time after the bundle changes).
    expect(await tryRange(seed!.clientURL, { ca: ca.cert, ...nextClient })).toMatch(/^refused: /);
    expect(await tryRange(seed!.clientURL, operatorTLS)).toBe("ok");
  });
});
