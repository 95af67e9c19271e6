// The scrape settings ServiceMonitor and PodMonitor share at spec level (limits, node metadata, body size, scrape
// protocols, native histograms), as prometheus-operator defines them: CRD schema fragments and the types they give
// (an endpoint's trackTimestampsStaleness is with the other endpoint fields in monitoring-common.ts). How each reaches the configuration, and on which
// Prometheus releases, is desired/scrape-settings.ts.
import * as Type from "typebox/type";
import { SCRAPE_PROTOCOLS } from "./monitoring-common.ts";

/** A byte size as Prometheus reads `body_size_limit` (prometheus-operator's ByteSize), e.g. "10MB", "1.5GiB". */
export const MONITOR_BYTE_SIZE_PATTERN = "(^0|([0-9]*[.])?[0-9]+((K|M|G|T|E|P)i?)?B)$";
/** A Kubernetes quantity (prometheus-operator's nativeHistogramMinBucketFactor), e.g. "1.1", "1100m". */
export const QUANTITY_PATTERN =
  "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$";

const bool = (description: string) => Type.Optional(Type.Boolean({ description }));
const limit = (description: string) =>
  Type.Optional(Type.Integer({ format: "int64", minimum: 0, description }));

/** The schema of MonitorScrapeSettings' fields. */
export function scrapeSettingsProperties() {
  return {
    // Node labels go to the targets (`__meta_kubernetes_node_*`); the server gets read access to Nodes.
    attachMetadata: Type.Optional(
      Type.Object(
        {
          node: bool(
            "Add the labels of the target's node (__meta_kubernetes_node_*); the server's ServiceAccount gets read access to Nodes.",
          ),
        },
        { description: "Metadata added to the discovered targets." },
      ),
    ),
    // Above it the scrape fails.
    bodySizeLimit: Type.Optional(
      Type.String({
        description: "Largest uncompressed response a scrape accepts, e.g. 10MB (KB, MB... are 1024-based).",
        pattern: MONITOR_BYTE_SIZE_PATTERN,
      }),
    ),
    scrapeProtocols: Type.Optional(
      Type.Array(Type.Enum([...SCRAPE_PROTOCOLS], { type: "string" }), {
        description: "The protocols Prometheus asks the targets for, in order of preference.",
        "x-kubernetes-list-type": "set",
      }),
    ),
    scrapeClassicHistograms: bool(
      "Also store the classic series of a histogram exposed as a native histogram (always_scrape_classic_histograms).",
    ),
    scrapeNativeHistograms: bool(
      "Scrape native histograms (Prometheus 3.8.0 and later; earlier releases scrape them only with the server's native-histograms feature flag).",
    ),
    nativeHistogramBucketLimit: limit(
      "Most buckets of a native histogram; above it the resolution is reduced (0: no limit).",
    ),
    // A quantity, e.g. "1.1".
    nativeHistogramMinBucketFactor: Type.Optional(
      Type.Unsafe<number | string>({
        anyOf: [{ type: "integer" }, { type: "string" }],
        "x-kubernetes-int-or-string": true,
        pattern: QUANTITY_PATTERN,
        description:
          "Smallest growth factor from one native histogram bucket to the next; below it buckets are merged (e.g. 1.1).",
      }),
    ),
    convertClassicHistogramsToNHCB: bool(
      "Store classic histograms as native histograms with custom buckets (before Prometheus 3.8.0 only with the server's native-histograms feature flag).",
    ),
    targetLimit: limit("Most targets this monitor may have; above it none is scraped."),
    labelLimit: limit("Most labels a sample may have."),
    labelNameLengthLimit: limit("Longest label name a sample may have."),
    labelValueLengthLimit: limit("Longest label value a sample may have."),
    keepDroppedTargets: limit("How many targets dropped by relabeling are kept for the targets page."),
    // Capstan always uses relabelings, with the same targets.
    selectorMechanism: Type.Optional(
      Type.Enum(["RelabelConfig", "RoleSelector"], {
        type: "string",
        description:
          "How discovery filters the targets; Capstan filters with relabelings either way (the same targets).",
      }),
    ),
  };
}

const scrapeSettingsSchema = Type.Object(scrapeSettingsProperties());

/** Spec-level scrape settings of ServiceMonitor and PodMonitor. */
export type MonitorScrapeSettings = Type.Static<typeof scrapeSettingsSchema>;
