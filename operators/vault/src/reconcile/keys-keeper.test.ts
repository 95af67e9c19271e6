// The KeysKeeper on its own, against core's in-memory API server: it retries until the keys are written, keeps the
// process's probes answering after the manager stopped (alive, not ready) and lets the process end only then.
import { Secret } from "@capstan/core";
import { FakeApiServer } from "@capstan/core/testing";
import { afterEach, describe, expect, it } from "vitest";
import { keysSecretName } from "../desired/names.ts";
import { keysSecret } from "../desired/objects.ts";
import { KeysKeeper } from "./keys-keeper.ts";
import { cluster } from "./test-fixture.ts";

const servers: FakeApiServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
});

async function get(port: number, path: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, body: await res.text() };
}

describe("KeysKeeper", () => {
  it("holds the keys through refused writes, serving alive-not-ready probes, and is idle once they are written", async () => {
    const server = await new FakeApiServer().start();
    servers.push(server);
    server.seed(keysSecret(cluster(), {}, {}));
    const outage = server.fail({ kind: "Secret", verb: "patch" }, 503);
    const keys = new KeysKeeper({
      client: server.client({ maxAttempts: 1 }),
      minDelayMs: 20,
      maxDelayMs: 100,
    });
    expect(keys.busy()).toBe(false);

    const written = keys.keep(cluster(), { "unseal-key-0": "QQ==", "root-token": "hvs.root" });
    let idle = false;
    void keys.idle().then(() => {
      idle = true;
    });
    while ((keys.pending("ns", "demo")?.attempts ?? 0) < 3) await new Promise((r) => setTimeout(r, 10));
    expect(keys.busy()).toBe(true);
    expect(() => keys.check()).toThrow(
      /ns\/demo: Secret demo-unseal-keys not written .*503|ServiceUnavailable/,
    );

    const probes = await keys.serveProbes(0, "127.0.0.1");
    const port = probes.port;
    expect(await get(port, "/healthz")).toMatchObject({ status: 200 });
    const ready = await get(port, "/readyz");
    expect(ready.status).toBe(503);
    expect(ready.body).toContain("demo-unseal-keys");
    expect(ready.body).not.toContain("hvs.root");
    expect(idle).toBe(false);

    outage.remove();
    await written;
    await keys.idle();
    expect(idle).toBe(true);
    expect(keys.busy()).toBe(false);
    expect((await get(port, "/readyz")).status).toBe(200);
    await probes.close();
    const secret = server.get(Secret, keysSecretName(cluster()), "ns");
    expect(Buffer.from(secret?.data?.["root-token"] ?? "", "base64").toString()).toBe("hvs.root");
  });

  it("makes the keys Secret again when it was deleted between the proof and the write", async () => {
    const server = await new FakeApiServer().start();
    servers.push(server);
    const keys = new KeysKeeper({ client: server.client({ maxAttempts: 1 }), minDelayMs: 20 });
    await keys.keep(cluster(), { "unseal-key-0": "QQ==" });
    const secret = server.get(Secret, keysSecretName(cluster()), "ns");
    expect(Buffer.from(secret?.data?.["unseal-key-0"] ?? "", "base64").toString()).toBe("QQ==");
    expect(keys.busy()).toBe(false);
  });
});
