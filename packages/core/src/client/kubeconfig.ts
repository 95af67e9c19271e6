// Kubeconfig loading without @kubernetes/client-node: its import costs ~85 MiB of RSS (generated models),
// more than an informer's cache of 10,000 objects. Files, tokens, client certificates, basic auth,
// impersonation and in-cluster service accounts are handled here; exec plugins and auth providers (OIDC,
// GCP, Azure) are handed to client-node's KubeConfig, imported only when such a user is in use.
import { accessSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, dirname, isAbsolute, join } from "node:path";
import { parse as parseYaml } from "yaml";

/**
 * What the client needs from a kubeconfig. client-node's `KubeConfig` fits (pass one as
 * `ClientOptions.kubeConfig`); `loadKubeConfig` returns Capstan's own `KubeConfigFile`.
 */
export interface KubeConfigLike {
  getCurrentCluster(): { server: string } | null;
  /** Adds TLS material (ca, cert, key, rejectUnauthorized, servername) and auth headers to `opts`. */
  applyToHTTPSOptions(opts: HttpsOptions): Promise<void>;
}

/** The fields of https.RequestOptions that {@link KubeConfigLike.applyToHTTPSOptions} fills in. */
export interface HttpsOptions {
  headers?: Record<string, string | string[] | number | undefined> | unknown;
  ca?: Buffer | string | unknown;
  cert?: Buffer | string | unknown;
  key?: Buffer | string | unknown;
  rejectUnauthorized?: boolean;
  servername?: string;
}

/** A cluster entry of a kubeconfig, paths made absolute. */
export interface KubeConfigCluster {
  server: string;
  "certificate-authority"?: string;
  "certificate-authority-data"?: string;
  /** A boolean; kubectl's parser (YAML 1.1) also reads yes/no, on/off, y/n, which this file's YAML 1.2 keeps as strings. */
  "insecure-skip-tls-verify"?: boolean | string;
  "tls-server-name"?: string;
}

/** A user entry of a kubeconfig, paths made absolute. */
export interface KubeConfigUser {
  token?: string;
  tokenFile?: string;
  username?: string;
  password?: string;
  "client-certificate"?: string;
  "client-certificate-data"?: string;
  "client-key"?: string;
  "client-key-data"?: string;
  as?: string;
  "as-groups"?: string[];
  "as-uid"?: string;
  exec?: Record<string, unknown>;
  "auth-provider"?: { name: string; config?: Record<string, string> };
}

const SERVICE_ACCOUNT = "/var/run/secrets/kubernetes.io/serviceaccount";
/** A token file is read again after this long (client-go re-reads a service account token every minute). */
const TOKEN_FILE_TTL_MS = 60_000;

/** The current context of a kubeconfig: one cluster and one user. */
export class KubeConfigFile implements KubeConfigLike {
  readonly cluster: KubeConfigCluster;
  readonly user: KubeConfigUser;
  /** Namespace of the current context ("" when unset). */
  readonly namespace: string;
  /** Where it came from, for error messages: file paths or "in-cluster". */
  readonly source: string;
  private tokenFile: { token: string; readAt: number } | undefined;
  private delegate: Promise<KubeConfigLike> | undefined;

  constructor(cluster: KubeConfigCluster, user: KubeConfigUser, namespace = "", source = "options") {
    if (!cluster.server) throw new Error(`kubeconfig (${source}): the current cluster has no server`);
    this.cluster = { ...cluster, server: cluster.server.replace(/\/$/, "") };
    this.user = user;
    this.namespace = namespace;
    this.source = source;
  }

  getCurrentCluster(): { server: string } {
    return { server: this.cluster.server };
  }

  async applyToHTTPSOptions(opts: HttpsOptions): Promise<void> {
    const { cluster, user } = this;
    if (yaml11True(cluster["insecure-skip-tls-verify"])) opts.rejectUnauthorized = false;
    if (cluster["tls-server-name"]) opts.servername = cluster["tls-server-name"];
    const ca = fileOrData(cluster["certificate-authority"], cluster["certificate-authority-data"]);
    if (ca) opts.ca = ca;
    const cert = fileOrData(user["client-certificate"], user["client-certificate-data"]);
    if (cert) opts.cert = cert;
    const key = fileOrData(user["client-key"], user["client-key-data"]);
    if (key) opts.key = key;
    opts.headers ??= {};
    const headers = opts.headers as Record<string, string>;
    if (user.exec !== undefined || user["auth-provider"] !== undefined) {
      // A plugin: client-node runs it (and caches its credential), adding headers and perhaps a cert/key.
      this.delegate ??= clientNodeKubeConfig(cluster, user);
      await (await this.delegate).applyToHTTPSOptions(opts);
    }
    const token = user.token ?? (user.tokenFile ? this.readTokenFile(user.tokenFile) : undefined);
    if (token) headers.Authorization = `Bearer ${token}`;
    else if (user.username !== undefined && user.password !== undefined) {
      headers.Authorization = `Basic ${Buffer.from(`${user.username}:${user.password}`).toString("base64")}`;
    }
    if (user.as) headers["Impersonate-User"] = user.as;
    if (user["as-uid"]) headers["Impersonate-Uid"] = user["as-uid"];
    // Node joins an array header into one comma-separated line; Kubernetes expects one line per group.
    if (user["as-groups"]?.length) headers["Impersonate-Group"] = user["as-groups"] as never;
  }

  private readTokenFile(path: string): string {
    const now = Date.now();
    if (this.tokenFile === undefined || now - this.tokenFile.readAt >= TOKEN_FILE_TTL_MS) {
      let token: string;
      try {
        token = readFileSync(path, "utf8").trim();
      } catch (err) {
        throw new Error(
          `kubeconfig (${this.source}): cannot read token file ${path}: ${(err as Error).message}`,
        );
      }
      this.tokenFile = { token, readAt: now };
    }
    return this.tokenFile.token;
  }
}

/**
 * Loads the client configuration as controller-runtime does: the files in KUBECONFIG (merged, the first
 * definition of a name and the first current-context win), else the pod's service account when running in a
 * cluster, else ~/.kube/config. `context` picks a context other than the current one.
 */
export function loadKubeConfig(options: { context?: string; env?: NodeJS.ProcessEnv } = {}): KubeConfigFile {
  const env = options.env ?? process.env;
  const files = (env.KUBECONFIG ?? "").split(delimiter).filter(Boolean);
  if (files.length > 0) return fromFiles(files, options.context);
  if (env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT && exists(`${SERVICE_ACCOUNT}/token`)) {
    return inClusterConfig(env);
  }
  const home = env.HOME || homedir();
  const config = join(home, ".kube", "config");
  if (exists(config)) return fromFiles([config], options.context);
  throw new Error(
    "no Kubernetes configuration: set KUBECONFIG, create ~/.kube/config, or run in a pod with a service account",
  );
}

/** The service account of the pod this process runs in (client-go's rest.InClusterConfig). */
export function inClusterConfig(
  env: NodeJS.ProcessEnv = process.env,
  root = SERVICE_ACCOUNT,
): KubeConfigFile {
  const host = env.KUBERNETES_SERVICE_HOST ?? "";
  const port = env.KUBERNETES_SERVICE_PORT ?? "";
  if (!host || !port) {
    throw new Error(
      "not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are unset",
    );
  }
  let namespace = "";
  try {
    namespace = readFileSync(`${root}/namespace`, "utf8").trim();
  } catch {
    // optional, as in client-go
  }
  return new KubeConfigFile(
    {
      server: `https://${host.includes(":") ? `[${host}]` : host}:${port}`,
      "certificate-authority": `${root}/ca.crt`,
    },
    { tokenFile: `${root}/token` },
    namespace,
    "in-cluster",
  );
}

interface Named<T> {
  name: string;
  value: T;
}

/** Parses and merges kubeconfig files, then resolves the chosen context. */
function fromFiles(paths: string[], contextName: string | undefined): KubeConfigFile {
  const clusters = new Map<string, KubeConfigCluster>();
  const users = new Map<string, KubeConfigUser>();
  const contexts = new Map<string, { cluster: string; user: string; namespace?: string }>();
  let current = contextName ?? "";
  const source = paths.join(delimiter);
  for (const path of paths) {
    let doc: Record<string, unknown>;
    try {
      // YAML 1.2's core schema, as everywhere in Capstan, with YAML 1.1's merge keys (`<<: *anchor`), which
      // kubectl's parser (go-yaml) applies; an empty file is an empty config, as in client-go.
      doc = (parseYaml(readFileSync(path, "utf8"), { merge: true }) ?? {}) as Record<string, unknown>;
    } catch (err) {
      // client-go skips a KUBECONFIG entry that does not exist; anything else is an error
      if ((err as NodeJS.ErrnoException).code === "ENOENT" && paths.length > 1) continue;
      throw new Error(`kubeconfig ${path}: ${(err as Error).message}`);
    }
    const dir = dirname(path);
    for (const { name, value } of entries<KubeConfigCluster>(doc.clusters, "cluster", path)) {
      if (clusters.has(name)) continue;
      clusters.set(name, absolute(value, dir, ["certificate-authority"]));
    }
    for (const { name, value } of entries<KubeConfigUser>(doc.users, "user", path)) {
      if (users.has(name)) continue;
      users.set(name, absolute(value, dir, ["client-certificate", "client-key", "tokenFile"]));
    }
    for (const { name, value } of entries<{ cluster: string; user: string }>(doc.contexts, "context", path)) {
      if (!contexts.has(name)) contexts.set(name, value);
    }
    if (!current && typeof doc["current-context"] === "string") current = doc["current-context"];
  }
  if (!current) throw new Error(`kubeconfig ${source}: no current-context is set`);
  const context = contexts.get(current);
  if (context === undefined) throw new Error(`kubeconfig ${source}: context "${current}" is not defined`);
  const cluster = clusters.get(context.cluster);
  if (cluster === undefined) {
    throw new Error(
      `kubeconfig ${source}: cluster "${context.cluster}" of context "${current}" is not defined`,
    );
  }
  // A context may name no user (anonymous); naming an unknown one is an error, as in client-go.
  const user = context.user ? users.get(context.user) : {};
  if (user === undefined) {
    throw new Error(`kubeconfig ${source}: user "${context.user}" of context "${current}" is not defined`);
  }
  return new KubeConfigFile(cluster, user, context.namespace ?? "", source);
}

/** The `{ name, <key>: value }` entries of a kubeconfig list. */
function entries<T>(list: unknown, key: string, path: string): Named<T>[] {
  if (list == null) return [];
  if (!Array.isArray(list)) throw new Error(`kubeconfig ${path}: ${key}s must be a list`);
  return list.map((entry: Record<string, unknown>, i) => {
    if (typeof entry?.name !== "string" || entry.name === "") {
      throw new Error(`kubeconfig ${path}: ${key}s[${i}].name is missing`);
    }
    return { name: entry.name, value: (entry[key] ?? {}) as T };
  });
}

/** A copy of `value` with its file fields made absolute relative to the kubeconfig's directory. */
function absolute<T extends object>(value: T, dir: string, fields: string[]): T {
  const out = { ...value } as Record<string, unknown>;
  for (const field of fields) {
    const path = out[field];
    if (typeof path === "string" && path !== "" && !isAbsolute(path)) out[field] = join(dir, path);
  }
  return out as T;
}

/**
 * Whether a kubeconfig boolean is true as kubectl reads it: YAML 1.1's true words too (`yes`, `on`, `y`), and never
 * a false one (`no`, `off`), which YAML 1.2 leaves as non-empty, truthy, strings.
 */
function yaml11True(value: boolean | string | undefined): boolean {
  return value === true || (typeof value === "string" && /^(y|Y|yes|Yes|YES|on|On|ON)$/.test(value));
}

function fileOrData(file: string | undefined, data: string | undefined): Buffer | undefined {
  if (file) return readFileSync(file);
  if (data) return Buffer.from(data, "base64");
  return undefined;
}

function exists(path: string): boolean {
  try {
    accessSync(path);
    return true;
  } catch {
    return false;
  }
}

/** client-node's KubeConfig for one cluster and user: it runs exec plugins and auth providers. */
async function clientNodeKubeConfig(
  cluster: KubeConfigCluster,
  user: KubeConfigUser,
): Promise<KubeConfigLike> {
  const { KubeConfig } = await import("@kubernetes/client-node");
  const kc = new KubeConfig();
  kc.loadFromClusterAndUser(
    { name: "cluster", server: cluster.server, skipTLSVerify: false },
    {
      name: "user",
      ...(user.exec ? { exec: user.exec } : {}),
      ...(user["auth-provider"] ? { authProvider: user["auth-provider"] } : {}),
    },
  );
  return kc as unknown as KubeConfigLike;
}
