// How the footprint benchmark starts and stops what it measures: a Capstan operator installed by its chart (its pod's
// process is found on this machine: the local cluster's containers are host processes), the same operator's bundle
// run as a local process with the flags and environment its chart and image give it (any cluster, e.g. a private
// kwok control plane), and prometheus-operator's own Go binary (the Go peer of the Prometheus operator).
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { Pod } from "../../packages/core/src/api/kinds.ts";
import type { Client } from "../../packages/core/src/client/client.ts";
import { imageNodeFlags } from "../peers/build.ts";
import { podProcess, startedAt } from "./proc.ts";
import type { Operator } from "./workloads.ts";

const { env } = process; // read here, not by turbo: no turbo.json entry needed
const REPO = join(import.meta.dirname, "..", "..");
const CACHE = env.CAPSTAN_CACHE ?? join(homedir(), ".cache", "capstan");

/** A running peer: the process to read, where to read its metrics and readiness, and how to stop it. */
export interface RunningPeer {
  pid: number;
  /** When the process started (ms since the epoch). */
  startedAt: number;
  /** Base URL of its plain-HTTP /metrics. */
  metricsUrl: string;
  /** URL that answers 200 once the peer is ready (Capstan: /readyz, caches synced). */
  readyUrl: string;
  /** Where its log goes (process peers), for a failure report. */
  log?: string;
  stop(): Promise<void>;
}

const versions = readFileSync(join(REPO, "e2e", "cluster", "local", "versions.env"), "utf8");
const version = (name: string) => new RegExp(`^${name}=(\\S+)$`, "m").exec(versions)?.[1] ?? "";
/** The local cluster's kubectl and Helm builds (e2e/cluster/local/build.sh), else the ones on PATH. */
export const kubectl = (() => {
  const bin = join(CACHE, `kubernetes-${version("KUBERNETES_VERSION")}`, "bin", "kubectl");
  return existsSync(bin) ? bin : "kubectl";
})();
const helm = (() => {
  const bin = env.CAPSTAN_HELM || join(CACHE, `helm-${version("HELM_VERSION")}`, "bin", "helm");
  return existsSync(bin) ? bin : "helm";
})();

/** A free TCP port on the loopback interface. */
export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** `kubectl apply --server-side` of every YAML file in `dir` (the operator's CRDs). */
export function applyDir(dir: string): void {
  execFileSync(
    kubectl,
    ["apply", "--server-side", "--force-conflicts", "--field-manager=capstan-bench", "-f", dir],
    {
      stdio: ["ignore", "ignore", "inherit"],
    },
  );
}

/**
 * The NODE_OPTIONS the chart sets from its default resources.limits.memory (the capstan-operator library chart's
 * "capstan-operator.nodeOptions": V8's old generation at five eighths of the limit), read from values.yaml without a
 * YAML parser (`memory:` under `limits:`); BENCH_NODE_OPTIONS replaces it ("" for none).
 */
export function chartNodeOptions(op: Operator): string {
  if (env.BENCH_NODE_OPTIONS !== undefined) return env.BENCH_NODE_OPTIONS;
  const values = readFileSync(join(REPO, "charts", `${op}-operator`, "values.yaml"), "utf8");
  const limit = /^resources:\n(?:\s+.*\n)*?\s+limits:\n(?:\s+.*\n)*?\s+memory:\s*"?(\d+)(Mi|Gi)"?/m.exec(
    values,
  );
  if (limit === null) return "";
  const mib = Number(limit[1]) * (limit[2] === "Gi" ? 1024 : 1);
  return `--max-old-space-size=${Math.floor((mib * 5) / 8)}`;
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(() => child.kill("SIGKILL"), 45_000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

function logFile(name: string): { path: string; stream: NodeJS.WritableStream } {
  const dir = join(tmpdir(), "capstan-bench-footprint");
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${name}-${Date.now()}.log`);
  return { path, stream: createWriteStream(path) };
}

/** The operator's bundle (operators/<op>/dist/main.js) as a local process, namespace-scoped to `namespace`. */
export async function startProcess(op: Operator, namespace: string): Promise<RunningPeer> {
  // BENCH_BUNDLE_DIR: another build of the bundle (e.g. one made without code splitting, to measure a lever).
  const bundle = join(REPO, "operators", op, env.BENCH_BUNDLE_DIR ?? "dist", "main.js");
  if (!existsSync(bundle))
    throw new Error(`${bundle} is missing: npx turbo run build --filter=@capstan/${op}-operator`);
  const [metrics, health] = [await freePort(), await freePort()];
  const nodeOptions = chartNodeOptions(op);
  const childEnv = {
    ...env,
    ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}),
    WATCH_NAMESPACE: namespace,
    LEADER_ELECT: "true",
    LEADER_ELECTION_NAME: `${op}-operator-leader`,
    POD_NAMESPACE: namespace,
    POD_NAME: `bench-${op}-operator`,
    METRICS_SECURE: "false",
    METRICS_BIND_ADDRESS: `127.0.0.1:${metrics}`,
    HEALTH_PROBE_BIND_ADDRESS: `127.0.0.1:${health}`,
    LOG_LEVEL: "info",
    NODE_ENV: "production",
  };
  const log = logFile(`${op}-operator`);
  const child = spawn(process.execPath, [...imageNodeFlags(), bundle], {
    env: childEnv,
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.pipe(log.stream);
  child.stderr?.pipe(log.stream);
  if (child.pid === undefined) throw new Error(`could not start ${bundle}`);
  return {
    pid: child.pid,
    startedAt: startedAt(child.pid),
    metricsUrl: `http://127.0.0.1:${metrics}/metrics`,
    readyUrl: `http://127.0.0.1:${health}/readyz`,
    log: log.path,
    stop: () => stopChild(child),
  };
}

/**
 * `helm install` of charts/<op>-operator as release bench-<op> in `namespace`, namespace-scoped to it, with the
 * chart's own resources and NODE_OPTIONS; CRDs applied beforehand (they may belong to another release). /metrics
 * in plain HTTP (metrics.secure=false), so the heap can be read; the pod's IP is routed from this machine.
 */
export async function startChart(client: Client, op: Operator, namespace: string): Promise<RunningPeer> {
  applyDir(join(REPO, "operators", op, "crds"));
  const release = `bench-${op}`;
  const args = [
    "install",
    release,
    join(REPO, "charts", `${op}-operator`),
    "--namespace",
    namespace,
    "--wait",
    "--timeout",
    "5m",
  ];
  const values = ["crds.enabled=false", `watchNamespace=${namespace}`, "metrics.secure=false"];
  if (op !== "etcd") values.push("reloaderImage=capstan.local/busybox:1");
  execFileSync(helm, [...args, ...values.flatMap((v) => ["--set", v])], {
    stdio: ["ignore", "ignore", "inherit"],
  });
  const selector = `app.kubernetes.io/instance=${release}`;
  const pods = (await client.list(Pod, { namespace, labelSelector: selector })).items.filter(
    (p) => p.metadata.deletionTimestamp === undefined,
  );
  const pod = pods[0];
  const ip = pod?.status?.podIP;
  const pid = pod?.metadata.uid === undefined ? undefined : podProcess(pod.metadata.uid);
  if (pod === undefined || ip === undefined || pid === undefined) {
    throw new Error(
      `no running process of ${release}'s pod found on this machine (is this the local cluster's node?)`,
    );
  }
  return {
    pid,
    startedAt: startedAt(pid),
    metricsUrl: `http://${ip}:8080/metrics`,
    readyUrl: `http://${ip}:8081/readyz`,
    stop: async () => {
      execFileSync(helm, ["uninstall", release, "--namespace", namespace, "--wait"], { stdio: "ignore" });
    },
  };
}

/** prometheus-operator's version the Go peer runs (its module from the Go module proxy). */
export const PROMETHEUS_OPERATOR_VERSION = env.BENCH_PROMETHEUS_OPERATOR_VERSION ?? "v0.85.0";

/** Builds prometheus-operator's cmd/operator once into ~/.cache/capstan/bench; returns the binary. */
export function buildPrometheusOperator(): string {
  const binary = join(CACHE, "bench", `prometheus-operator-${PROMETHEUS_OPERATOR_VERSION}`);
  if (existsSync(binary)) return binary;
  console.log(
    `building prometheus-operator ${PROMETHEUS_OPERATOR_VERSION} (first run: several minutes) -> ${binary}`,
  );
  const work = join(CACHE, "bench", "prometheus-operator-module");
  mkdirSync(work, { recursive: true });
  const goEnv = { ...env, GOFLAGS: "-mod=mod" };
  if (!existsSync(join(work, "go.mod"))) {
    execFileSync("go", ["mod", "init", "capstan.dev/bench/prometheus-operator"], {
      cwd: work,
      env: goEnv,
      stdio: "inherit",
    });
  }
  const pkg = "github.com/prometheus-operator/prometheus-operator";
  execFileSync("go", ["get", `${pkg}@${PROMETHEUS_OPERATOR_VERSION}`], {
    cwd: work,
    env: goEnv,
    stdio: "inherit",
  });
  execFileSync("go", ["build", "-o", binary, `${pkg}/cmd/operator`], {
    cwd: work,
    env: goEnv,
    stdio: "inherit",
  });
  return binary;
}

/** The directory of prometheus-operator's CRD files in its module (downloaded from the Go module proxy). */
export function prometheusOperatorCrdDir(): string {
  const out = execFileSync(
    "go",
    [
      "mod",
      "download",
      "-json",
      `github.com/prometheus-operator/prometheus-operator@${PROMETHEUS_OPERATOR_VERSION}`,
    ],
    { cwd: tmpdir(), env: { ...env, GOFLAGS: "-mod=mod" }, encoding: "utf8" },
  );
  return join((JSON.parse(out) as { Dir: string }).Dir, "example", "prometheus-operator-crd");
}

/**
 * The CRD files of prometheus-operator that this cluster lacks (its Prometheus, Alertmanager...): the Go peer needs
 * them; the monitoring.coreos.com monitors and rules are the Capstan chart's, kept as they are.
 */
export function missingGoCrds(present: Set<string>): string[] {
  const dir = prometheusOperatorCrdDir();
  return readdirSync(dir)
    .filter((f) => f.endsWith(".yaml"))
    .filter((f) => !present.has(/_([a-z]+)\.yaml$/.exec(f)?.[1] ?? ""))
    .map((f) => join(dir, f));
}

/**
 * prometheus-operator's connection flags (it takes no kubeconfig: --apiserver and TLS files) from KUBECONFIG's first
 * cluster and user, when they name files (the local clusters' kubeconfigs do).
 */
function goPeerConnection(): string[] {
  const kubeconfig = readFileSync(env.KUBECONFIG ?? "", "utf8");
  const field = (name: string) => new RegExp(`^\\s+${name}:\\s*(\\S+)\\s*$`, "m").exec(kubeconfig)?.[1];
  const [server, ca, cert, key] = ["server", "certificate-authority", "client-certificate", "client-key"].map(
    field,
  );
  if (server === undefined || ca === undefined || cert === undefined || key === undefined) {
    throw new Error(
      "the Go peer needs a kubeconfig with server, certificate-authority, client-certificate and client-key files",
    );
  }
  return [`--apiserver=${server}`, `--ca-file=${ca}`, `--cert-file=${cert}`, `--key-file=${key}`];
}

/** prometheus-operator (Go) as a local process, watching `namespace` only. */
export async function startGoPeer(binary: string, namespace: string): Promise<RunningPeer> {
  const web = await freePort();
  const log = logFile("prometheus-operator-go");
  const child = spawn(
    binary,
    [
      ...goPeerConnection(),
      `--namespaces=${namespace}`,
      `--web.listen-address=127.0.0.1:${web}`,
      "--log-level=info",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  child.stdout?.pipe(log.stream);
  child.stderr?.pipe(log.stream);
  if (child.pid === undefined) throw new Error(`could not start ${binary}`);
  return {
    pid: child.pid,
    startedAt: startedAt(child.pid),
    metricsUrl: `http://127.0.0.1:${web}/metrics`,
    readyUrl: `http://127.0.0.1:${web}/healthz`,
    log: log.path,
    stop: () => stopChild(child),
  };
}
