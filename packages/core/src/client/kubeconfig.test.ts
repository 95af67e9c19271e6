// Tests for kubeconfig loading: files, merging, YAML as kubectl reads it (merge keys, empty files), relative paths,
// credentials, in-cluster, plugins through client-node, and that importing the client does not load client-node.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type HttpsOptions, inClusterConfig, loadKubeConfig } from "./kubeconfig.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "capstan-kubeconfig-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
  vi.useRealTimers();
});

/** Writes `text` to `name` under the test's directory; returns its path. */
function file(name: string, text: string): string {
  const path = join(dir, name);
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
  return path;
}

async function applied(kc: { applyToHTTPSOptions(o: HttpsOptions): Promise<void> }) {
  const opts: HttpsOptions & { headers?: Record<string, unknown> } = {};
  await kc.applyToHTTPSOptions(opts);
  return opts;
}

const b64 = (s: string) => Buffer.from(s).toString("base64");

describe("loadKubeConfig", () => {
  it("reads the current context of a KUBECONFIG file: server, CA data, token", async () => {
    const path = file(
      "config",
      `apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: c1
  cluster:
    server: https://127.0.0.1:6443/
    certificate-authority-data: ${b64("CA")}
    tls-server-name: kubernetes
users:
- name: u1
  user:
    token: secret-token
contexts:
- name: dev
  context: { cluster: c1, user: u1, namespace: team-a }
`,
    );
    const kc = loadKubeConfig({ env: { KUBECONFIG: path } });
    expect(kc.getCurrentCluster()).toEqual({ server: "https://127.0.0.1:6443" });
    expect(kc.namespace).toBe("team-a");
    const opts = await applied(kc);
    expect(opts.ca?.toString()).toBe("CA");
    expect(opts.servername).toBe("kubernetes");
    expect(opts.rejectUnauthorized).toBeUndefined();
    expect(opts.headers).toEqual({ Authorization: "Bearer secret-token" });
  });

  it("merges KUBECONFIG files: the first definition of a name and the first current-context win", async () => {
    const a = file(
      "a.yaml",
      `current-context: one
clusters: [{ name: shared, cluster: { server: "https://first:1" } }]
users: [{ name: u, user: { token: first } }]
contexts: [{ name: one, context: { cluster: shared, user: u } }]
`,
    );
    const b = file(
      "b.yaml",
      `current-context: two
clusters:
- { name: shared, cluster: { server: "https://second:2" } }
- { name: other, cluster: { server: "https://other:3", insecure-skip-tls-verify: true } }
users: [{ name: u, user: { token: second } }, { name: v, user: { username: ann, password: pw } }]
contexts: [{ name: two, context: { cluster: other, user: v } }]
`,
    );
    const kc = loadKubeConfig({ env: { KUBECONFIG: `${a}:${join(dir, "missing")}:${b}` } });
    expect(kc.getCurrentCluster().server).toBe("https://first:1");
    expect((await applied(kc)).headers).toEqual({ Authorization: "Bearer first" });

    const two = loadKubeConfig({ env: { KUBECONFIG: `${a}:${b}` }, context: "two" });
    expect(two.getCurrentCluster().server).toBe("https://other:3");
    const opts = await applied(two);
    expect(opts.rejectUnauthorized).toBe(false);
    expect(opts.headers).toEqual({ Authorization: `Basic ${b64("ann:pw")}` });
  });

  it("applies anchors and merge keys (<<), as kubectl's YAML parser does", async () => {
    const path = file(
      "config",
      `current-context: direct
clusters:
- name: prod
  cluster: &prod
    server: https://prod.example:6443
    certificate-authority-data: ${b64("PROD-CA")}
    tls-server-name: prod.example
- name: prod-direct
  cluster:
    <<: *prod
    server: https://10.0.0.1:6443
users:
- { name: admin, user: &admin { token: t1 } }
- { name: admin-too, user: { <<: *admin } }
contexts:
- { name: direct, context: { cluster: prod-direct, user: admin-too } }
`,
    );
    const kc = loadKubeConfig({ env: { KUBECONFIG: path } });
    expect(kc.getCurrentCluster().server).toBe("https://10.0.0.1:6443");
    const opts = await applied(kc);
    expect(opts.ca?.toString()).toBe("PROD-CA");
    expect(opts.servername).toBe("prod.example");
    expect(opts.headers).toEqual({ Authorization: "Bearer t1" });
  });

  it("takes an empty KUBECONFIG file (or one of comments only) as an empty config, as client-go does", () => {
    const empty = file("empty", "");
    const comments = file("comments", "# nothing here yet\n");
    const real = file(
      "config",
      `current-context: x
clusters: [{ name: c, cluster: { server: "https://h:1" } }]
contexts: [{ name: x, context: { cluster: c } }]
`,
    );
    const kc = loadKubeConfig({ env: { KUBECONFIG: [empty, comments, real].join(delimiter) } });
    expect(kc.getCurrentCluster().server).toBe("https://h:1");
    expect(() => loadKubeConfig({ env: { KUBECONFIG: empty } })).toThrow(
      `kubeconfig ${empty}: no current-context is set`,
    );
  });

  it("keeps a date in an auth provider's config the string client-go reads (no Date)", () => {
    const path = file(
      "config",
      `current-context: x
clusters: [{ name: c, cluster: { server: "https://h:1" } }]
users:
- name: u
  user:
    auth-provider:
      name: oidc
      config: { expiry: 2026-01-01T00:00:00Z, idp-issuer-url: https://issuer }
contexts: [{ name: x, context: { cluster: c, user: u } }]
`,
    );
    const user = loadKubeConfig({ env: { KUBECONFIG: path } }).user;
    expect(user["auth-provider"]?.config).toEqual({
      expiry: "2026-01-01T00:00:00Z",
      "idp-issuer-url": "https://issuer",
    });
  });

  it("skips TLS verification only for a true insecure-skip-tls-verify, YAML 1.1's words as kubectl reads them", async () => {
    const skips = async (value: string) => {
      const path = file(
        `config-${value}`,
        `current-context: x
clusters: [{ name: c, cluster: { server: "https://h:1", insecure-skip-tls-verify: ${value} } }]
contexts: [{ name: x, context: { cluster: c } }]
`,
      );
      return (await applied(loadKubeConfig({ env: { KUBECONFIG: path } }))).rejectUnauthorized === false;
    };
    for (const yes of ["true", "True", "yes", "on", "y"]) expect(await skips(yes), yes).toBe(true);
    for (const no of ["false", "no", "off", "n", "NO", '""']) expect(await skips(no), no).toBe(false);
  });

  it("reads certificate, key, CA and token files relative to the kubeconfig's directory", async () => {
    file("pki/ca.crt", "CA-FILE");
    file("pki/client.crt", "CERT-FILE");
    file("pki/client.key", "KEY-FILE");
    const token = file("pki/token", "file-token\n");
    const path = file(
      "nested/../config",
      `current-context: x
clusters: [{ name: c, cluster: { server: "https://h:1", certificate-authority: pki/ca.crt } }]
users:
- name: u
  user: { client-certificate: pki/client.crt, client-key: ${join(dir, "pki/client.key")}, tokenFile: pki/token }
contexts: [{ name: x, context: { cluster: c, user: u } }]
`,
    );
    vi.useFakeTimers({ now: 0 });
    const kc = loadKubeConfig({ env: { KUBECONFIG: path } });
    const opts = await applied(kc);
    expect([opts.ca, opts.cert, opts.key].map(String)).toEqual(["CA-FILE", "CERT-FILE", "KEY-FILE"]);
    expect(opts.headers).toEqual({ Authorization: "Bearer file-token" });
    // a rotated token is read again after a minute, not before
    writeFileSync(token, "rotated");
    vi.setSystemTime(59_999);
    expect((await applied(kc)).headers).toEqual({ Authorization: "Bearer file-token" });
    vi.setSystemTime(60_000);
    expect((await applied(kc)).headers).toEqual({ Authorization: "Bearer rotated" });
  });

  it("sends impersonation headers", async () => {
    const path = file(
      "config",
      `current-context: x
clusters: [{ name: c, cluster: { server: "https://h:1" } }]
users: [{ name: u, user: { token: t, as: alice, as-uid: "42", as-groups: [devs, ops] } }]
contexts: [{ name: x, context: { cluster: c, user: u } }]
`,
    );
    expect((await applied(loadKubeConfig({ env: { KUBECONFIG: path } }))).headers).toEqual({
      Authorization: "Bearer t",
      "Impersonate-User": "alice",
      "Impersonate-Uid": "42",
      "Impersonate-Group": ["devs", "ops"],
    });
  });

  it("falls back to ~/.kube/config, and says what to do when there is no configuration", () => {
    expect(() => loadKubeConfig({ env: { HOME: dir } })).toThrow(
      "no Kubernetes configuration: set KUBECONFIG, create ~/.kube/config, or run in a pod with a service account",
    );
    file(
      ".kube/config",
      `current-context: x
clusters: [{ name: c, cluster: { server: "https://home:1" } }]
contexts: [{ name: x, context: { cluster: c } }]
`,
    );
    expect(loadKubeConfig({ env: { HOME: dir } }).getCurrentCluster().server).toBe("https://home:1");
  });

  it("names the file and the missing piece in its errors", () => {
    const path = file(
      "config",
      `current-context: x
clusters: [{ name: c, cluster: { server: "https://h:1" } }]
contexts: [{ name: x, context: { cluster: c, user: nobody } }]
`,
    );
    expect(() => loadKubeConfig({ env: { KUBECONFIG: path } })).toThrow(
      `kubeconfig ${path}: user "nobody" of context "x" is not defined`,
    );
    expect(() => loadKubeConfig({ env: { KUBECONFIG: path }, context: "y" })).toThrow(
      `kubeconfig ${path}: context "y" is not defined`,
    );
    expect(() => loadKubeConfig({ env: { KUBECONFIG: file("bad", "clusters: {") } })).toThrow(
      /kubeconfig .*bad/,
    );
  });
});

describe("inClusterConfig", () => {
  it("uses the service account's token, CA and namespace, and brackets an IPv6 host", async () => {
    file("sa/token", "sa-token");
    file("sa/ca.crt", "SA-CA");
    file("sa/namespace", "operators\n");
    const root = join(dir, "sa");
    const kc = inClusterConfig({ KUBERNETES_SERVICE_HOST: "10.0.0.1", KUBERNETES_SERVICE_PORT: "443" }, root);
    expect(kc.getCurrentCluster().server).toBe("https://10.0.0.1:443");
    expect(kc.namespace).toBe("operators");
    const opts = await applied(kc);
    expect(String(opts.ca)).toBe("SA-CA");
    expect(opts.headers).toEqual({ Authorization: "Bearer sa-token" });
    const v6 = inClusterConfig({ KUBERNETES_SERVICE_HOST: "fd00::1", KUBERNETES_SERVICE_PORT: "443" }, root);
    expect(v6.getCurrentCluster().server).toBe("https://[fd00::1]:443");
  });
});

describe("exec plugins", () => {
  it("runs the plugin through client-node and sends the token it returns", async () => {
    const plugin = file(
      "plugin.mjs",
      `console.log(JSON.stringify({ apiVersion: "client.authentication.k8s.io/v1", kind: "ExecCredential",
        status: { token: "from-plugin-" + process.argv[2] } }));`,
    );
    const path = file(
      "config",
      `current-context: x
clusters: [{ name: c, cluster: { server: "https://h:1" } }]
users:
- name: u
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ${process.execPath}
      args: [${plugin}, abc]
      interactiveMode: Never
contexts: [{ name: x, context: { cluster: c, user: u } }]
`,
    );
    const opts = await applied(loadKubeConfig({ env: { KUBECONFIG: path } }));
    expect((opts.headers as Record<string, string>).Authorization).toBe("Bearer from-plugin-abc");
  });
});

describe("module loading", () => {
  it("importing the client does not load @kubernetes/client-node", () => {
    // A fresh process that fails if anything resolves client-node while the client module loads.
    const script = `
      import { registerHooks } from "node:module";
      registerHooks({
        resolve(specifier, context, next) {
          if (specifier.startsWith("@kubernetes/client-node")) throw new Error("client-node was imported");
          return next(specifier, context);
        },
      });
      await import(${JSON.stringify(join(import.meta.dirname, "client.ts"))});
      console.log("ok");
    `;
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
    expect(out.trim()).toBe("ok");
  });
});
