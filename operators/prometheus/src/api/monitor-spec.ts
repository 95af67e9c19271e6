// The spec fields ServiceMonitor and PodMonitor share, in prometheus-operator's order (which the generated CRD YAML
// keeps): the labels at the head of the spec, and the selection, limits and scrape settings after the endpoints.
// Each monitor names what its fields refer to (a Service's labels or a Pod's) through the descriptions it passes.
import * as Type from "typebox/type";
import {
  fallbackScrapeProtocolSchema,
  labelSelectorSchema,
  namespaceSelectorSchema,
} from "./monitoring-common.ts";
import { scrapeSettingsProperties } from "./scrape-settings.ts";

/**
 * jobLabel (described by `jobLabel`), then `between` (ServiceMonitor's targetLabels; PodMonitor has none), then
 * podTargetLabels.
 */
export function targetLabelProperties<Between extends Type.TProperties = Record<never, never>>(
  jobLabel: string,
  between: Between = {} as Between,
) {
  return {
    jobLabel: Type.Optional(Type.String({ description: jobLabel })),
    ...between,
    podTargetLabels: Type.Optional(
      Type.Array(Type.String(), { description: "Pod labels copied onto the targets." }),
    ),
  };
}

/**
 * selector (described by `selector`; namespaceSelector defaults to the monitor's own namespace), sampleLimit,
 * fallbackScrapeProtocol and the scrape settings (scrape-settings.ts).
 */
export function selectionProperties(selector: string) {
  return {
    selector: labelSelectorSchema(selector),
    namespaceSelector: Type.Optional(namespaceSelectorSchema),
    sampleLimit: Type.Optional(
      Type.Integer({
        format: "int64",
        minimum: 0,
        description: "Samples a scrape may return before it fails.",
      }),
    ),
    fallbackScrapeProtocol: Type.Optional(fallbackScrapeProtocolSchema),
    ...scrapeSettingsProperties(),
  };
}
