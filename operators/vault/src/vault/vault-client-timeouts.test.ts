// The Vault client's deadlines against a real HTTPS server that answers slowly: PUT /v1/sys/init is never given up
// (its answer is the only copy of the keys), every other call still times out.
import { once } from "node:events";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCA, issueServerCertificate } from "../desired/tls.ts";
import { VaultClient, VaultError } from "./vault-client.ts";

const ANSWER_AFTER_MS = 800;
const TIMEOUT_MS = 200;

let server: Server;
let ca: string;
let address: string;

beforeAll(async () => {
  const now = new Date();
  const authority = await createCA("test-ca", now);
  const cert = await issueServerCertificate(authority, ["localhost", "127.0.0.1"], now, 3_600_000);
  ca = authority.cert;
  server = createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
    req.resume();
    setTimeout(() => {
      res.setHeader("content-type", "application/json");
      if (req.url === "/v1/sys/init") {
        res.end(JSON.stringify({ keys: ["a"], keys_base64: ["YQ=="], root_token: "hvs.root" }));
      } else {
        res.end(JSON.stringify({ initialized: true, sealed: false, standby: false, version: "1.14.8" }));
      }
    }, ANSWER_AFTER_MS);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  address = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  server.close();
});

describe("VaultClient deadlines", () => {
  it("waits for an init answer longer than its timeout: the answer holds the only copy of the keys", async () => {
    const v = new VaultClient({ address, ca, servername: "localhost", timeoutMs: TIMEOUT_MS });
    try {
      await expect(v.init(1, 1)).resolves.toMatchObject({ keys_base64: ["YQ=="], root_token: "hvs.root" });
    } finally {
      await v.close();
    }
  });

  it("still gives up on any other call after its timeout", async () => {
    const v = new VaultClient({ address, ca, servername: "localhost", timeoutMs: TIMEOUT_MS });
    try {
      const err = await v.health().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(VaultError);
      expect((err as VaultError).status).toBe(0);
    } finally {
      await v.close();
    }
  });

  it("an init still ends when its signal aborts (the operator decides, never a deadline)", async () => {
    const v = new VaultClient({ address, ca, servername: "localhost", timeoutMs: 60_000 });
    try {
      await expect(v.init(1, 1, { signal: AbortSignal.timeout(100) })).rejects.toThrow();
    } finally {
      await v.close();
    }
  });
});
