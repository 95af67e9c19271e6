// End-to-end suites' Helm releases: install a chart and wait for it, upgrade it with more values, uninstall it
// (never throwing, for afterAll); a release's pods and their logs, and the Events about an object, for
// assertions and failure reports. Helm is what @capstan/cli/helm finds (CAPSTAN_HELM, else the local cluster's
// cached build, else PATH), the rule the CLI and the shell scripts follow too.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { requireHelm } from "@capstan/cli/helm";
import { type Client, isNotFound, KubeEvent, type ObjectOf, Pod } from "@capstan/core";

const run = promisify(execFile);

/** Chart values for `--set` (numbers and booleans as Helm parses them) and `--set-string` (kept as strings). */
export interface ChartValues {
  set?: Record<string, string | number | boolean>;
  setString?: Record<string, string>;
}

/** The `--set`/`--set-string` arguments for `values`, in a stable order. */
export function chartValueArgs(values: ChartValues): string[] {
  const sets = Object.entries(values.set ?? {}).flatMap(([k, v]) => ["--set", `${k}=${v}`]);
  const strings = Object.entries(values.setString ?? {}).flatMap(([k, v]) => ["--set-string", `${k}=${v}`]);
  return [...sets, ...strings];
}

/** Runs helm against $KUBECONFIG (or the cluster of `kubeconfig`); a failure throws with helm's output. */
export async function helm(
  args: readonly string[],
  kubeconfig = process.env.KUBECONFIG ?? "",
): Promise<string> {
  const bin = requireHelm();
  try {
    return (await run(bin, ["--kubeconfig", kubeconfig, ...args], { maxBuffer: 16 << 20 })).stdout;
  } catch (err) {
    const e = err as Error & { stderr?: string; stdout?: string };
    throw new Error(
      `helm ${args.slice(0, 2).join(" ")} failed: ${e.stderr ?? ""}${e.stdout ?? ""}${e.message}`,
    );
  }
}

/** One installed release. */
export interface HelmRelease {
  release: string;
  namespace: string;
  /** `helm upgrade --reuse-values` with more values, waiting for the rollout. */
  upgrade(values: ChartValues): Promise<void>;
  /** `helm uninstall --wait`; never throws (it runs in afterAll). */
  uninstall(): Promise<void>;
}

/** `helm install --wait` of the chart at `chart` (a directory) as `release` in `namespace`. */
export async function installChart(
  chart: string,
  release: string,
  namespace: string,
  values: ChartValues = {},
  timeout = "180s",
): Promise<HelmRelease> {
  const where = ["--namespace", namespace];
  await helm([
    "install",
    release,
    chart,
    ...where,
    "--wait",
    "--timeout",
    timeout,
    ...chartValueArgs(values),
  ]);
  return {
    release,
    namespace,
    upgrade: async (more) => {
      await helm([
        "upgrade",
        release,
        chart,
        ...where,
        "--reuse-values",
        "--wait",
        "--timeout",
        timeout,
        ...chartValueArgs(more),
      ]);
    },
    uninstall: async () => {
      await helm(["uninstall", release, ...where, "--wait", "--timeout", "120s"]).catch((err: unknown) =>
        console.warn(`uninstalling ${namespace}/${release}: ${String(err)}`),
      );
    },
  };
}

/** Every pod of a release (label app.kubernetes.io/instance), those being deleted too. */
async function allReleasePods(
  client: Client,
  release: { release: string; namespace: string },
): Promise<ObjectOf<typeof Pod>[]> {
  const pods = await client.list(Pod, {
    namespace: release.namespace,
    labelSelector: `app.kubernetes.io/instance=${release.release}`,
  });
  return pods.items;
}

/** The pods of a release (label app.kubernetes.io/instance) that are not being deleted. */
export async function releasePods(
  client: Client,
  release: { release: string; namespace: string },
): Promise<ObjectOf<typeof Pod>[]> {
  return (await allReleasePods(client, release)).filter((p) => p.metadata.deletionTimestamp === undefined);
}

/** The last `tailLines` of every container log of a release's pods, the previous container's too. */
export async function releaseLogs(
  client: Client,
  release: { release: string; namespace: string },
  tailLines = 100,
): Promise<string> {
  const parts: string[] = [];
  for (const pod of await allReleasePods(client, release)) {
    const name = pod.metadata.name ?? "";
    for (const previous of [true, false]) {
      const text = await client
        .raw(
          `/api/v1/namespaces/${release.namespace}/pods/${name}/log?tailLines=${tailLines}${previous ? "&previous=true" : ""}`,
        )
        .catch((err: unknown) => (isNotFound(err) || previous ? "" : `(no log: ${String(err)})`));
      if (typeof text === "string" && text !== "") {
        parts.push(`--- pod ${name}${previous ? " (previous container)" : ""}:\n${text}`);
      }
    }
  }
  return parts.join("\n");
}

/** One Event about an object, as a suite reads it. */
export interface ObjectEvent {
  reason: string;
  note: string;
  type: string;
  /** When it first happened (eventTime, microseconds; ISO strings compare in time order). */
  time: string;
  /** How many times it happened (an Event series counts each). */
  count: number;
}

/** The events.k8s.io/v1 Events regarding the object `kind` `namespace/name`, oldest first. */
export async function eventsAbout(
  client: Client,
  kind: { kind: string },
  namespace: string,
  name: string,
): Promise<ObjectEvent[]> {
  const list = await client.list(KubeEvent, { namespace });
  return list.items
    .filter((e) => e.regarding?.kind === kind.kind && e.regarding?.name === name)
    .map((e) => ({
      reason: e.reason ?? "",
      note: e.note ?? "",
      type: e.type ?? "",
      time: String(e.eventTime ?? e.metadata.creationTimestamp ?? ""),
      count: e.series?.count ?? 1,
    }))
    .sort((a, b) => a.time.localeCompare(b.time));
}
