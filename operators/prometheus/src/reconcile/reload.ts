// What the operator learns about live reloads. The reloader sidecar in each pod reloads Prometheus when the
// mounted config Secret changes (see RELOADER_SCRIPT); the operator only watches the outcome: each ready pod's
// GET /api/v1/status/runtimeinfo (reloadConfigSuccess, lastConfigTime). A newer lastConfigTime is one reload
// (capstan_prometheus_config_reloads_total{result}); a pod whose last reload failed makes the server Degraded. And
// each ready pod's reloader state (GET /user/state): which configuration generation its Prometheus accepted or
// refused, from which the operator records the last-good generation and reports a refused one (judgeGenerations).
import { RELOADER_STATE_PATH, WEB_PORT } from "../desired/reloader.ts";

/** The part of Prometheus's runtimeinfo the operator reads. */
export interface RuntimeInfo {
  reloadConfigSuccess: boolean;
  /** RFC 3339 time of the last (attempted) configuration load. */
  lastConfigTime: string;
}

/** Asks one pod's Prometheus for its runtimeinfo; undefined when it does not answer (tests replace it). */
export type RuntimeInfoClient = (podIP: string, signal?: AbortSignal) => Promise<RuntimeInfo | undefined>;

/** Timeout of one runtimeinfo call: a pod that does not answer must not stall the reconcile. */
export const RUNTIME_INFO_TIMEOUT_MS = 2_000;

/** The default {@link RuntimeInfoClient}: HTTP to <podIP>:9090. */
export const httpRuntimeInfo: RuntimeInfoClient = async (podIP, signal) => {
  const timeout = AbortSignal.timeout(RUNTIME_INFO_TIMEOUT_MS);
  try {
    const res = await fetch(
      `http://${podIP.includes(":") ? `[${podIP}]` : podIP}:9090/api/v1/status/runtimeinfo`,
      {
        signal: signal === undefined ? timeout : AbortSignal.any([signal, timeout]),
      },
    );
    if (!res.ok) return undefined;
    const body = (await res.json()) as { data?: Partial<RuntimeInfo> };
    const d = body.data;
    if (typeof d?.reloadConfigSuccess !== "boolean" || typeof d.lastConfigTime !== "string") return undefined;
    return { reloadConfigSuccess: d.reloadConfigSuccess, lastConfigTime: d.lastConfigTime };
  } catch {
    return undefined;
  }
};

/** One pod's answer (undefined: it did not answer, or is not ready). */
export interface PodRuntime {
  /** The pod's uid (a recreated pod starts over). */
  uid: string;
  name: string;
  info?: RuntimeInfo;
}

/** What {@link judgeReloads} decided. */
export interface ReloadVerdict {
  /** Reloads seen since the last look (each pod's lastConfigTime that moved on), by result. */
  success: number;
  failure: number;
  /** Pods whose last configuration load failed (Prometheus keeps running the previous configuration). */
  failing: string[];
  /** lastConfigTime per pod uid, to pass as `seen` next time (pods that are gone are dropped). */
  seen: Map<string, string>;
}

/**
 * Pure: compares each pod's runtimeinfo with the lastConfigTime seen before. A pod seen for the first time
 * counts nothing (its start is not a reload); a later lastConfigTime counts one reload with the pod's current
 * result; a pod that did not answer keeps its previous value and counts nothing.
 */
export function judgeReloads(seen: ReadonlyMap<string, string>, pods: readonly PodRuntime[]): ReloadVerdict {
  const out: ReloadVerdict = { success: 0, failure: 0, failing: [], seen: new Map() };
  for (const p of pods) {
    const before = seen.get(p.uid);
    if (p.info === undefined) {
      if (before !== undefined) out.seen.set(p.uid, before);
      continue;
    }
    out.seen.set(p.uid, p.info.lastConfigTime);
    if (!p.info.reloadConfigSuccess) out.failing.push(p.name);
    if (before !== undefined && before !== p.info.lastConfigTime) {
      if (p.info.reloadConfigSuccess) out.success++;
      else out.failure++;
    }
  }
  out.failing.sort();
  return out;
}

/**
 * What a pod's reloader says (its state file, served by Prometheus at /user/state, see desired/reloader.ts): the
 * generation Prometheus last accepted (empty until Prometheus is up), the last one it refused since (empty when the
 * latest attempt was accepted), and Prometheus's answer to that refused reload.
 */
export interface ReloaderState {
  accepted: string;
  refused: string;
  message: string;
}

/** Asks one pod's reloader for its state; undefined when it does not answer (tests replace it). */
export type ReloaderStateClient = (podIP: string, signal?: AbortSignal) => Promise<ReloaderState | undefined>;

/** Parses the reloader's state file (`accepted=`, `refused=`, `message=` lines); undefined when it is not one. */
export function parseReloaderState(text: string): ReloaderState | undefined {
  const field = (k: string) => text.match(new RegExp(`^${k}=(.*)$`, "m"))?.[1];
  const accepted = field("accepted");
  if (accepted === undefined) return undefined;
  return { accepted, refused: field("refused") ?? "", message: field("message") ?? "" };
}

/** The default {@link ReloaderStateClient}: HTTP GET <podIP>:9090/user/state. */
export const httpReloaderState: ReloaderStateClient = async (podIP, signal) => {
  const timeout = AbortSignal.timeout(RUNTIME_INFO_TIMEOUT_MS);
  try {
    const res = await fetch(
      `http://${podIP.includes(":") ? `[${podIP}]` : podIP}:${WEB_PORT}${RELOADER_STATE_PATH}`,
      { signal: signal === undefined ? timeout : AbortSignal.any([signal, timeout]) },
    );
    if (!res.ok) return undefined;
    return parseReloaderState(await res.text());
  } catch {
    return undefined;
  }
};

/** One server pod as {@link judgeGenerations} sees it. */
export interface PodGeneration {
  name: string;
  /** Whether the pod runs the Prometheus image the spec asks for (not mid-upgrade). */
  currentImage: boolean;
  /** Its reloader's state; undefined when it is not ready or did not answer. */
  state?: ReloaderState;
}

/** What {@link judgeGenerations} decided. */
export interface GenerationVerdict {
  /**
   * Every pod runs the spec's image and accepted `candidate`: the operator records it as last-good. False with no
   * pod, or with one that did not answer (never recorded on partial evidence).
   */
  allAccepted: boolean;
  /** Pods whose Prometheus refused `candidate`, in name order, with Prometheus's message. */
  refused: { pod: string; accepted: string; message: string }[];
}

/**
 * Pure: whether every server pod accepted the candidate generation, and which refused it. A refusal of an older
 * candidate is history (the pod tries each new candidate), so only `candidate`'s refusals count.
 */
export function judgeGenerations(candidate: string, pods: readonly PodGeneration[]): GenerationVerdict {
  const refused = pods
    .filter((p) => p.state !== undefined && p.state.refused === candidate && candidate !== "")
    .map((p) => ({ pod: p.name, accepted: p.state?.accepted ?? "", message: p.state?.message ?? "" }))
    .sort((a, b) => a.pod.localeCompare(b.pod));
  const allAccepted =
    candidate !== "" &&
    pods.length > 0 &&
    pods.every((p) => p.currentImage && p.state !== undefined && p.state.accepted === candidate);
  return { allAccepted, refused };
}

/** Reads the last lines of a server pod's prometheus container log; undefined when it cannot (tests replace it). */
export type PodLogClient = (
  namespace: string,
  pod: string,
  signal?: AbortSignal,
) => Promise<string | undefined>;

/** How many lines of the prometheus container's log the operator reads to explain a refused reload. */
export const LOG_TAIL_LINES = 300;

/** The value of logfmt key `key` in `line` (quoted values unescaped); undefined when absent. */
function logfmtValue(line: string, key: string): string | undefined {
  const m = line.match(new RegExp(`(?:^| )${key}=("((?:[^"\\\\]|\\\\.)*)"|\\S*)`));
  if (m === null) return undefined;
  return m[2] !== undefined ? m[2].replace(/\\(.)/g, "$1") : m[1];
}

/**
 * Pure: what Prometheus logged about its last refused reload, from its log (logfmt, as Prometheus 3 writes it): the
 * `err` of every ERROR line between the last "Loading configuration file" and the "Error reloading config" that
 * follows it, but that summary itself (the reload's HTTP answer says it already), joined with "; ". Undefined when
 * the log holds no refused reload (it scrolled away, or the pod restarted since).
 */
export function reloadErrorFromLog(log: string): string | undefined {
  const lines = log.split("\n");
  const end = lines.findLastIndex((l) => logfmtValue(l, "msg") === "Error reloading config");
  if (end < 0) return undefined;
  let start = end;
  while (start > 0 && logfmtValue(lines[start] ?? "", "msg") !== "Loading configuration file") start--;
  const errors = lines
    .slice(start + 1, end)
    .filter((l) => logfmtValue(l, "level") === "ERROR")
    .map((l) => logfmtValue(l, "err"))
    .filter((e): e is string => e !== undefined && e !== "");
  return errors.length === 0 ? undefined : [...new Set(errors)].join("; ");
}
