// How a monitor's scrape settings (api/scrape-settings.ts) reach the scrape job, as Prometheus reads them: the
// checks of what the server's release (spec.version) and feature flags (spec.enableFeatures) would refuse or
// silently not do, and the job keys, in prometheus-operator's order. Facts from config/config.go and scrape/scrape.go
// of Prometheus 3.0.0 to 3.16.0: track_timestamps_staleness, body_size_limit, scrape_protocols,
// native_histogram_bucket_limit, native_histogram_min_bucket_factor, always_scrape_classic_histograms,
// convert_classic_histograms_to_nhcb and kubernetes_sd_configs' attach_metadata are in every 3.x;
// scrape_native_histograms came in 3.8.0 (before it, the native-histograms flag turned native histograms on for every
// job, and without it 3.0 to 3.7 drop every native histogram, the converted ones included). Pure.
import { atLeast } from "@capstan/promql";
import { SCRAPE_PROTOCOLS } from "../api/monitoring-common.ts";
import { DEFAULT_PROMETHEUS_VERSION, type Prometheus } from "../api/prometheus.ts";
import { MONITOR_BYTE_SIZE_PATTERN, QUANTITY_PATTERN } from "../api/scrape-settings.ts";
import { enabledFeatures, NATIVE_HISTOGRAMS_FLAG } from "./feature-flags.ts";

/** The release that added `scrape_native_histograms`. */
export const SCRAPE_NATIVE_HISTOGRAMS_SINCE = "3.8.0";

type Obj = Record<string, unknown>;

/** Why a monitor's setting cannot be taken: InvalidField (a value Prometheus refuses), UnsupportedField (the release). */
export interface SettingProblem {
  reason: "InvalidField" | "UnsupportedField";
  message: string;
}

const LIMITS: [field: string, key: string][] = [
  ["sampleLimit", "sample_limit"],
  ["targetLimit", "target_limit"],
  ["labelLimit", "label_limit"],
  ["labelNameLengthLimit", "label_name_length_limit"],
  ["labelValueLengthLimit", "label_value_length_limit"],
  ["keepDroppedTargets", "keep_dropped_targets"],
];
const BOOLEANS = [
  "scrapeClassicHistograms",
  "scrapeNativeHistograms",
  "convertClassicHistogramsToNHCB",
] as const;

const byteSize = new RegExp(MONITOR_BYTE_SIZE_PATTERN);
const quantity = new RegExp(QUANTITY_PATTERN);
const BYTE_UNITS: Record<string, number> = {
  "": 1,
  K: 2 ** 10,
  M: 2 ** 20,
  G: 2 ** 30,
  T: 2 ** 40,
  P: 2 ** 50,
  E: 2 ** 60,
};

/**
 * The bytes of `text` as Prometheus reads body_size_limit (units.ParseBase2Bytes: KB and KiB are both 1024), for the
 * spellings prometheus-operator's ByteSize allows; undefined when it is not one or overflows an int64.
 */
export function parseByteSize(text: string): number | undefined {
  if (!byteSize.test(text)) return undefined;
  if (text === "0") return 0;
  const m = /^([0-9]*\.?[0-9]+)([KMGTPE]?)i?B$/.exec(text);
  if (m === null) return undefined;
  const bytes = Number(m[1]) * (BYTE_UNITS[m[2] ?? ""] ?? 1);
  return bytes > 2 ** 63 - 1 ? undefined : Math.trunc(bytes);
}

/** Quantity suffixes: decimal (n to E) and binary (Ki to Ei); the small ones divide, so 1100m is exactly 1.1. */
const MULTIPLY: Record<string, number> = {
  "": 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};
const DIVIDE: Record<string, number> = { n: 1e9, u: 1e6, m: 1e3 };

/** A Kubernetes quantity as a number (resource.Quantity's AsApproximateFloat64), or undefined when it is not one. */
export function parseQuantity(value: unknown): number | undefined {
  if (typeof value === "number") return Number.isFinite(value) ? value : undefined;
  if (typeof value !== "string" || !quantity.test(value)) return undefined;
  const m = /^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(.*)$/.exec(value);
  if (m === null) return undefined;
  const [, num = "", suffix = ""] = m;
  if (/^[eE]/.test(suffix)) return Number(`${num}${suffix}`);
  const divisor = DIVIDE[suffix];
  if (divisor !== undefined) return Number(num) / divisor;
  const factor = MULTIPLY[suffix];
  return factor === undefined ? undefined : Number(num) * factor;
}

const nativeHistogramsFlag = (p: Prometheus) => enabledFeatures(p.spec).includes(NATIVE_HISTOGRAMS_FLAG);
const server = (p: Prometheus) => `Prometheus ${p.metadata.namespace ?? ""}/${p.metadata.name ?? ""}`;

/**
 * What the server `p` would refuse, or not do, in the spec-level scrape settings of a monitor (`spec`): the first
 * problem, naming the field, or undefined.
 */
export function scrapeSettingsProblem(spec: Obj, p: Prometheus): SettingProblem | undefined {
  const invalid = (message: string): SettingProblem => ({ reason: "InvalidField", message });
  const version = p.spec.version ?? DEFAULT_PROMETHEUS_VERSION;
  for (const [field] of LIMITS) {
    const v = spec[field];
    if (v !== undefined && !(Number.isSafeInteger(v) && (v as number) >= 0)) {
      return invalid(`spec.${field} ${JSON.stringify(v)} is not a whole number of 0 or more`);
    }
  }
  for (const field of BOOLEANS) {
    if (spec[field] !== undefined && typeof spec[field] !== "boolean") {
      return invalid(`spec.${field} ${JSON.stringify(spec[field])} is not true or false`);
    }
  }
  const node = (spec.attachMetadata as Obj | undefined)?.node;
  if (node !== undefined && typeof node !== "boolean") {
    return invalid(`spec.attachMetadata.node ${JSON.stringify(node)} is not true or false`);
  }
  const body = spec.bodySizeLimit;
  if (body !== undefined && (typeof body !== "string" || parseByteSize(body) === undefined)) {
    return invalid(
      `spec.bodySizeLimit ${JSON.stringify(body)} is not a byte size Prometheus reads (e.g. 10MB, 512KiB, 0)`,
    );
  }
  const protocols = spec.scrapeProtocols;
  if (protocols !== undefined) {
    if (!Array.isArray(protocols)) return invalid("spec.scrapeProtocols is not a list");
    const seen = new Set<string>();
    for (const [i, sp] of protocols.entries()) {
      if (!(SCRAPE_PROTOCOLS as readonly unknown[]).includes(sp)) {
        return invalid(
          `spec.scrapeProtocols[${i}] ${JSON.stringify(sp)} is not a scrape protocol (${SCRAPE_PROTOCOLS.join(", ")})`,
        );
      }
      const lower = String(sp).toLowerCase();
      if (seen.has(lower)) return invalid(`spec.scrapeProtocols: ${sp} is listed twice`);
      seen.add(lower);
    }
  }
  const fallback = spec.fallbackScrapeProtocol;
  if (fallback !== undefined && !(SCRAPE_PROTOCOLS as readonly unknown[]).includes(fallback)) {
    return invalid(
      `spec.fallbackScrapeProtocol ${JSON.stringify(fallback)} is not a scrape protocol (${SCRAPE_PROTOCOLS.join(", ")})`,
    );
  }
  const limit = spec.nativeHistogramBucketLimit;
  if (limit !== undefined && !(Number.isSafeInteger(limit) && (limit as number) >= 0)) {
    return invalid(
      `spec.nativeHistogramBucketLimit ${JSON.stringify(limit)} is not a whole number of 0 or more`,
    );
  }
  const factor = spec.nativeHistogramMinBucketFactor;
  if (factor !== undefined && parseQuantity(factor) === undefined) {
    return invalid(
      `spec.nativeHistogramMinBucketFactor ${JSON.stringify(factor)} is not a number (e.g. 1.1)`,
    );
  }
  if (!atLeast(version, SCRAPE_NATIVE_HISTOGRAMS_SINCE)) {
    // Before 3.8.0 one flag turns native histograms on for every job, and without it none is stored.
    const flag = nativeHistogramsFlag(p);
    const needFlag = `add ${NATIVE_HISTOGRAMS_FLAG} to spec.enableFeatures of ${server(p)}, or run Prometheus ${SCRAPE_NATIVE_HISTOGRAMS_SINCE} or later`;
    if (spec.scrapeNativeHistograms === true && !flag) {
      return {
        reason: "UnsupportedField",
        message: `spec.scrapeNativeHistograms: Prometheus ${version} scrapes native histograms only with --enable-feature=${NATIVE_HISTOGRAMS_FLAG}, for every job: ${needFlag}`,
      };
    }
    if (spec.scrapeNativeHistograms === false && flag) {
      return {
        reason: "UnsupportedField",
        message: `spec.scrapeNativeHistograms: false: Prometheus ${version} with --enable-feature=${NATIVE_HISTOGRAMS_FLAG} scrapes native histograms for every job, and cannot turn them off for one (${SCRAPE_NATIVE_HISTOGRAMS_SINCE} and later can)`,
      };
    }
    if (spec.convertClassicHistogramsToNHCB === true && !flag) {
      return {
        reason: "UnsupportedField",
        message: `spec.convertClassicHistogramsToNHCB: Prometheus ${version} drops the converted histograms without --enable-feature=${NATIVE_HISTOGRAMS_FLAG} (the classic ones too, unless scrapeClassicHistograms): ${needFlag}`,
      };
    }
  }
  return undefined;
}

/**
 * The spec-level scrape settings of a monitor as scrape job keys, in prometheus-operator's order (limits, native
 * histograms, scrape protocols, the fallback protocol, the body size limit), for the server `p`. Only what
 * scrapeSettingsProblem accepted reaches here.
 */
export function scrapeSettingsKeys(spec: Obj, p: Pick<Prometheus, "spec">): Obj {
  const out: Obj = {};
  for (const [field, key] of LIMITS) {
    const v = spec[field];
    if (typeof v === "number") out[key] = v;
  }
  const version = p.spec.version ?? DEFAULT_PROMETHEUS_VERSION;
  if (typeof spec.scrapeNativeHistograms === "boolean" && atLeast(version, SCRAPE_NATIVE_HISTOGRAMS_SINCE)) {
    out.scrape_native_histograms = spec.scrapeNativeHistograms;
  }
  if (typeof spec.nativeHistogramBucketLimit === "number") {
    out.native_histogram_bucket_limit = spec.nativeHistogramBucketLimit;
  }
  const factor = parseQuantity(spec.nativeHistogramMinBucketFactor);
  if (factor !== undefined) out.native_histogram_min_bucket_factor = factor;
  if (typeof spec.scrapeClassicHistograms === "boolean") {
    out.always_scrape_classic_histograms = spec.scrapeClassicHistograms;
  }
  if (typeof spec.convertClassicHistogramsToNHCB === "boolean") {
    out.convert_classic_histograms_to_nhcb = spec.convertClassicHistogramsToNHCB;
  }
  if (Array.isArray(spec.scrapeProtocols) && spec.scrapeProtocols.length > 0) {
    out.scrape_protocols = [...spec.scrapeProtocols];
  }
  if (typeof spec.fallbackScrapeProtocol === "string")
    out.fallback_scrape_protocol = spec.fallbackScrapeProtocol;
  if (typeof spec.bodySizeLimit === "string") out.body_size_limit = spec.bodySizeLimit;
  return out;
}

/** `attach_metadata` of the monitor's kubernetes_sd_config, when spec.attachMetadata.node is set. */
export function attachMetadata(spec: Obj): Obj | undefined {
  const node = (spec.attachMetadata as Obj | undefined)?.node;
  return typeof node === "boolean" ? { node } : undefined;
}

/** Whether a monitor asks for its targets' node labels (the server then needs to read Nodes). */
export function attachesNodeMetadata(spec: Obj): boolean {
  return (spec.attachMetadata as Obj | undefined)?.node === true;
}
