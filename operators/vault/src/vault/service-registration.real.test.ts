// Vault's own Kubernetes service registration, with the real Vault binary and core's in-memory API server: the
// configuration file the operator generates (service-registration.json) is what Vault loads, Vault labels its own
// pod as its state changes (vault-initialized, vault-sealed, vault-active, vault-version), and it asks the API
// server for nothing but GET and PATCH of its own pod, which is all the pods' Role grants.
//
// Vault's client reads its token and the API server's CA from fixed paths (/var/run/secrets/kubernetes.io/
// serviceaccount) and speaks only HTTPS: Vault runs in a mount namespace of its own (unshare -m, so root) with a
// tmpfs on /run holding them, and a TLS proxy fronts the in-memory server. Skipped where unshare -m is refused.
import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { createServer as createHttpsServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type KubeObject, Pod } from "@capstan/core";
import { FakeApiServer } from "@capstan/core/testing";
import { eventually, freePort, killAll, type LoggedProcess, spawnLogged } from "@capstan/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { VaultCluster } from "../api/vault-cluster.ts";
import { configMap, REGISTRATION_CONFIG_FILE, vaultPod } from "../desired/objects.ts";
import { createCA, issueServerCertificate } from "../desired/tls.ts";
import { localVaultBinary } from "./local-vault.ts";
import { VaultClient } from "./vault-client.ts";

const canUnshare = spawnSync("unshare", ["-m", "true"]).status === 0;
if (!canUnshare)
  console.warn("service-registration.real.test.ts: `unshare -m` is refused (not root?): skipped");

const cluster: VaultCluster = {
  apiVersion: "vault.capstan.dev/v1alpha1",
  kind: "VaultCluster",
  metadata: { name: "demo", namespace: "sec", uid: "5a1c0f5e-0000-4000-8000-000000000001" },
  spec: {
    replicas: 1,
    version: "1.14.8",
    repository: "hashicorp/vault",
    storage: { size: "1Gi" },
    tls: { duration: "2160h", renewBefore: "720h" },
    unseal: { shares: 1, threshold: 1, keepRootToken: false, retainKeysOnDelete: true },
  },
};
const POD = "/api/v1/namespaces/sec/pods/demo-0";

/** An HTTPS server forwarding every request to `target` (http://127.0.0.1:port) as it came. */
async function tlsProxy(target: string, pair: { cert: string; key: string }): Promise<Server> {
  const upstream = new URL(target);
  const server = createHttpsServer(pair, (req, res) => {
    const forwarded = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forwarded.on("error", () => res.destroy());
    req.pipe(forwarded);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return server;
}

describe.skipIf(!canUnshare)(
  "Vault's Kubernetes service registration (real Vault, in-memory API server)",
  () => {
    let api: FakeApiServer;
    let proxy: Server;
    let dir = "";
    let vault: LoggedProcess | undefined;
    let client: VaultClient;

    let address = "";
    let caCert = "";
    const labels = () => api.get(Pod, "demo-0", "sec")?.metadata.labels;
    const vaultRequests = () => api.log.filter((r) => r.resource === "pods");

    beforeAll(async () => {
      const pod = vaultPod(cluster, "demo-0", { reloaderImage: "busybox:1.37" });
      api = await new FakeApiServer({ objects: [pod as KubeObject] }).start();
      const ca = await createCA("capstan test CA", new Date());
      const pair = await issueServerCertificate(ca, ["localhost", "127.0.0.1"], new Date(), 3_600_000);
      proxy = await tlsProxy(api.url, pair);

      dir = await mkdtemp(join(tmpdir(), "capstan-vault-registration-"));
      const secrets = join(dir, "serviceaccount");
      await mkdir(secrets);
      await mkdir(join(dir, "data"));
      await writeFile(join(secrets, "token"), "the-pods-token");
      await writeFile(join(secrets, "ca.crt"), ca.cert);
      await writeFile(join(dir, "tls.crt"), pair.cert);
      await writeFile(join(dir, "tls.key"), pair.key);
      const port = await freePort();
      const clusterPort = await freePort();
      await writeFile(
        join(dir, "vault.json"),
        JSON.stringify({
          disable_mlock: true,
          ui: false,
          listener: [
            {
              tcp: {
                address: `127.0.0.1:${port}`,
                cluster_address: `127.0.0.1:${clusterPort}`,
                tls_cert_file: join(dir, "tls.crt"),
                tls_key_file: join(dir, "tls.key"),
              },
            },
          ],
          storage: { raft: { path: join(dir, "data"), node_id: "demo-0" } },
          api_addr: `https://127.0.0.1:${port}`,
          cluster_addr: `https://127.0.0.1:${clusterPort}`,
        }),
      );
      // The operator's own file, as the pods load it.
      await writeFile(
        join(dir, REGISTRATION_CONFIG_FILE),
        configMap(cluster).data?.[REGISTRATION_CONFIG_FILE] ?? "",
      );

      const mount = "/run/secrets/kubernetes.io/serviceaccount";
      const script = [
        "set -e",
        "mount -t tmpfs tmpfs /run",
        `mkdir -p ${mount}`,
        `cp "$SA_SOURCE/token" "$SA_SOURCE/ca.crt" ${mount}/`,
        `exec "$VAULT" server -config="$DIR/vault.json" -config="$DIR/${REGISTRATION_CONFIG_FILE}"`,
      ].join("\n");
      vault = spawnLogged(
        "unshare",
        ["-m", "--propagation", "private", "sh", "-c", script],
        join(dir, "vault.log"),
        {
          PATH: process.env.PATH ?? "/usr/bin:/bin",
          HOME: dir,
          VAULT: localVaultBinary(),
          DIR: dir,
          SA_SOURCE: secrets,
          KUBERNETES_SERVICE_HOST: "127.0.0.1",
          KUBERNETES_SERVICE_PORT: String((proxy.address() as AddressInfo).port),
          // What the pod's downward API gives it.
          VAULT_K8S_POD_NAME: "demo-0",
          VAULT_K8S_NAMESPACE: "sec",
        },
      );
      address = `https://127.0.0.1:${port}`;
      caCert = ca.cert;
      client = new VaultClient({ address, ca: caCert, servername: "localhost", timeoutMs: 15_000 });
      // Started, or ended (a binary built without Kubernetes service registration refuses the stanza).
      let ended: number | string | undefined;
      void vault.exited.then((code) => {
        ended = code;
      });
      const deadline = Date.now() + 60_000;
      for (;;) {
        const log = await readFile(join(dir, "vault.log"), "utf8");
        if (log.includes("Vault server started!")) break;
        if (ended !== undefined || Date.now() > deadline) {
          throw new Error(
            `Vault ${ended === undefined ? "did not start" : `exited (${ended})`}:\n${log.slice(-2000)}`,
          );
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    }, 90_000);

    afterAll(async () => {
      if (vault !== undefined) await killAll([vault]);
      proxy?.close();
      await api?.stop();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it("labels its pod when it starts: not initialized, sealed, not active", async () => {
      await eventually(
        () =>
          expect(labels()).toMatchObject({
            "app.kubernetes.io/instance": "demo",
            "vault-initialized": "false",
            "vault-sealed": "true",
            "vault-active": "false",
            "vault-version": "1.14.8",
          }),
        { timeoutMs: 30_000, intervalMs: 200, message: "Vault labels its pod" },
      );
    });

    it("follows init, unseal and leadership: vault-active=true once it leads, false after a step-down", async () => {
      const init = await client.init(1, 1);
      await client.unsealWith(init.keys_base64);
      await eventually(
        () =>
          expect(labels()).toMatchObject({
            "vault-initialized": "true",
            "vault-sealed": "false",
            "vault-active": "true",
          }),
        { timeoutMs: 60_000, intervalMs: 200, message: "the pod is labelled initialized, unsealed, active" },
      );
      // A step-down: Vault marks itself not active (a single node takes the lead again after it).
      const before = vaultRequests().length;
      await new VaultClient({
        address,
        ca: caCert,
        servername: "localhost",
        token: init.root_token,
        timeoutMs: 15_000,
      }).stepDown();
      await eventually(
        () => {
          const sent = vaultRequests()
            .slice(before)
            .flatMap((r) => (Array.isArray(r.body) ? r.body : []) as { path?: string; value?: unknown }[]);
          expect(sent).toContainEqual({
            op: "replace",
            path: "/metadata/labels/vault-active",
            value: "false",
          });
        },
        { timeoutMs: 30_000, intervalMs: 200, message: "Vault marks its pod not active on a step-down" },
      );
    });

    it("asks for nothing but GET and PATCH of its own pod (what the Role grants)", () => {
      const asked = new Set(vaultRequests().map((r) => `${r.method} ${r.path}`));
      expect([...asked].sort()).toEqual([`GET ${POD}`, `PATCH ${POD}`]);
      expect(api.log.filter((r) => r.resource !== "pods")).toEqual([]);
      expect(vaultRequests().every((r) => r.status >= 200 && r.status < 300)).toBe(true);
    });
  },
);
