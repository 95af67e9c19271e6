// A switch of the listener certificate's source against real Vault servers (the "real" test project): one server
// still serves the operator's own certificate (CA A, Secret demo-tls), one was restarted onto cert-manager's
// (CA B, Secret vault-cm, spec.tls.secretName). The trust ensureTls computes from what the pods mount lets the
// operator's client see both; spec's CA alone refuses the first, and the refusal is told apart from no answer.
import type { Client, KubeObject, SecretObject } from "@capstan/core";
import { FakeApiServer } from "@capstan/core/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { tlsHosts } from "../desired/names.ts";
import { base64Values, tlsSecret } from "../desired/objects.ts";
import { issueServerCertificate } from "../desired/tls.ts";
import { LocalVault, type LocalVaultNode } from "../vault/local-vault.ts";
import { certificateRejected } from "../vault/vault-client.ts";
import { defaultVaultClient } from "./observe.ts";
import { cluster } from "./test-fixture.ts";
import { ensureTls } from "./tls.ts";

vi.setConfig({ testTimeout: 120_000 });

describe("the operator's client during a switch of tls.secretName, against real Vault servers", () => {
  let operatorIssued: LocalVault;
  let certManager: LocalVault;
  let onA: LocalVaultNode;
  let onB: LocalVaultNode;
  let server: FakeApiServer;
  let client: Client;
  const spec = () => {
    const c = cluster(3);
    c.spec.tls = { ...c.spec.tls, secretName: "vault-cm" };
    return c;
  };
  const own = new Map<string, SecretObject>();

  beforeAll(async () => {
    // Two LocalVaults: each has its own CA and issues its servers' certificates from it.
    [operatorIssued, certManager] = await Promise.all([LocalVault.create(), LocalVault.create()]);
    [onA, onB] = await Promise.all([operatorIssued.start("a"), certManager.start("b")]);
    const cm = await issueServerCertificate(certManager.ca, tlsHosts(cluster(3)), new Date(), 3_600_000);
    const userSecret = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "vault-cm", namespace: "ns" },
      type: "kubernetes.io/tls",
      data: base64Values({ "tls.crt": cm.cert, "tls.key": cm.key, "ca.crt": certManager.ca.cert }),
    } as KubeObject;
    server = await new FakeApiServer({ objects: [userSecret] }).start();
    client = server.client({ maxAttempts: 1 });
    const served = await issueServerCertificate(
      operatorIssued.ca,
      tlsHosts(cluster(3)),
      new Date(),
      2160 * 3_600_000,
    );
    own.set("demo-ca", tlsSecret(cluster(3), "demo-ca", operatorIssued.ca));
    own.set("demo-tls", tlsSecret(cluster(3), "demo-tls", served, operatorIssued.ca.cert));
  }, 120_000);
  afterAll(async () => {
    await Promise.all([operatorIssued?.stop(), certManager?.stop(), server?.stop()]);
  });

  const health = (node: LocalVaultNode, ca: string) => {
    const v = defaultVaultClient({
      address: node.apiAddr,
      servername: node.servername,
      ca,
      timeoutMs: 10_000,
    });
    return v.health().finally(() => v.close());
  };

  it("trusts both CAs while a pod still mounts the old Secret, and only the new one after", async () => {
    const get = async (name: string) => own.get(name);
    const during = await ensureTls(
      client,
      spec(),
      get,
      new Date(),
      undefined,
      new Map([
        ["demo-tls", ["demo-0", "demo-2"]],
        ["vault-cm", ["demo-1"]],
      ]),
    );
    expect((await health(onA, during.ca ?? "")).sealed).toBe(true);
    expect((await health(onB, during.ca ?? "")).sealed).toBe(true);
    expect(during.switching).toEqual({
      to: "vault-cm",
      from: [{ secret: "demo-tls", pods: ["demo-0", "demo-2"] }],
    });

    // Every pod on the new Secret: spec's CA alone, which the server on the old certificate fails with a
    // certificate error (Degraded CertificateUntrusted, not "not answering").
    const after = await ensureTls(
      client,
      spec(),
      get,
      new Date(),
      undefined,
      new Map([["vault-cm", ["demo-0", "demo-1", "demo-2"]]]),
    );
    expect(after.switching).toBeUndefined();
    expect((await health(onB, after.ca ?? "")).sealed).toBe(true);
    const refused = await health(onA, after.ca ?? "").catch((err: unknown) => err);
    expect(certificateRejected(refused), String(refused)).toBe(true);
  });
});
