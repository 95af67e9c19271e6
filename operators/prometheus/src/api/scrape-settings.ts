// The scrape settings ServiceMonitor and PodMonitor share at spec level (limits, node metadata, body size, scrape
// protocols, native histograms), as prometheus-operator defines them: TypeScript types and CRD schema fragments
// (an endpoint's trackTimestampsStaleness is with the other endpoint fields in monitoring-common.ts). How each reaches the configuration, and on which
// Prometheus releases, is desired/scrape-settings.ts.
import type { JSONSchemaProps } from "@capstan/core";
import { SCRAPE_PROTOCOLS, type ScrapeProtocol } from "./monitoring-common.ts";

/** A byte size as Prometheus reads `body_size_limit` (prometheus-operator's ByteSize), e.g. "10MB", "1.5GiB". */
export const MONITOR_BYTE_SIZE_PATTERN = "(^0|([0-9]*[.])?[0-9]+((K|M|G|T|E|P)i?)?B)$";
/** A Kubernetes quantity (prometheus-operator's nativeHistogramMinBucketFactor), e.g. "1.1", "1100m". */
export const QUANTITY_PATTERN =
  "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$";

/** Spec-level scrape settings of ServiceMonitor and PodMonitor. */
export interface MonitorScrapeSettings {
  /** Add the node's labels to the targets (`__meta_kubernetes_node_*`); the server gets read access to Nodes. */
  attachMetadata?: { node?: boolean };
  /** Largest uncompressed response a scrape accepts, e.g. "10MB"; above it the scrape fails. */
  bodySizeLimit?: string;
  /** The protocols Prometheus asks targets for, in order of preference. */
  scrapeProtocols?: ScrapeProtocol[];
  /** Also store a histogram's classic series when it is exposed as a native histogram. */
  scrapeClassicHistograms?: boolean;
  /** Scrape native histograms (Prometheus 3.8.0 on; before: the server's native-histograms flag). */
  scrapeNativeHistograms?: boolean;
  /** Most buckets a native histogram may have before its resolution is reduced. */
  nativeHistogramBucketLimit?: number;
  /** Smallest growth factor between native histogram buckets before they are merged (a quantity, e.g. "1.1"). */
  nativeHistogramMinBucketFactor?: number | string;
  /** Store classic histograms as native histograms with custom buckets (NHCB). */
  convertClassicHistogramsToNHCB?: boolean;
  targetLimit?: number;
  labelLimit?: number;
  labelNameLengthLimit?: number;
  labelValueLengthLimit?: number;
  keepDroppedTargets?: number;
  /** How discovery filters targets; Capstan always uses relabelings, with the same targets. */
  selectorMechanism?: "RelabelConfig" | "RoleSelector";
}

const bool = (description: string): JSONSchemaProps => ({ type: "boolean", description });
const limit = (description: string): JSONSchemaProps => ({
  type: "integer",
  format: "int64",
  minimum: 0,
  description,
});

/** The schema of MonitorScrapeSettings' fields. */
export function scrapeSettingsProperties(): Record<string, JSONSchemaProps> {
  return {
    attachMetadata: {
      type: "object",
      description: "Metadata added to the discovered targets.",
      properties: {
        node: bool(
          "Add the labels of the target's node (__meta_kubernetes_node_*); the server's ServiceAccount gets read access to Nodes.",
        ),
      },
    },
    bodySizeLimit: {
      type: "string",
      description: "Largest uncompressed response a scrape accepts, e.g. 10MB (KB, MB... are 1024-based).",
      pattern: MONITOR_BYTE_SIZE_PATTERN,
    },
    scrapeProtocols: {
      type: "array",
      description: "The protocols Prometheus asks the targets for, in order of preference.",
      "x-kubernetes-list-type": "set",
      items: { type: "string", enum: [...SCRAPE_PROTOCOLS] },
    },
    scrapeClassicHistograms: bool(
      "Also store the classic series of a histogram exposed as a native histogram (always_scrape_classic_histograms).",
    ),
    scrapeNativeHistograms: bool(
      "Scrape native histograms (Prometheus 3.8.0 and later; earlier releases scrape them only with the server's native-histograms feature flag).",
    ),
    nativeHistogramBucketLimit: limit(
      "Most buckets of a native histogram; above it the resolution is reduced (0: no limit).",
    ),
    nativeHistogramMinBucketFactor: {
      anyOf: [{ type: "integer" }, { type: "string" }],
      "x-kubernetes-int-or-string": true,
      pattern: QUANTITY_PATTERN,
      description:
        "Smallest growth factor from one native histogram bucket to the next; below it buckets are merged (e.g. 1.1).",
    },
    convertClassicHistogramsToNHCB: bool(
      "Store classic histograms as native histograms with custom buckets (before Prometheus 3.8.0 only with the server's native-histograms feature flag).",
    ),
    targetLimit: limit("Most targets this monitor may have; above it none is scraped."),
    labelLimit: limit("Most labels a sample may have."),
    labelNameLengthLimit: limit("Longest label name a sample may have."),
    labelValueLengthLimit: limit("Longest label value a sample may have."),
    keepDroppedTargets: limit("How many targets dropped by relabeling are kept for the targets page."),
    selectorMechanism: {
      type: "string",
      enum: ["RelabelConfig", "RoleSelector"],
      description:
        "How discovery filters the targets; Capstan filters with relabelings either way (the same targets).",
    },
  };
}
