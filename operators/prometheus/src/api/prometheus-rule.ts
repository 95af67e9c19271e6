// PrometheusRule (monitoring.coreos.com/v1): alerting and recording rule groups, as prometheus-operator defines
// them; typed, and a CRD schema that keeps every field it does not model.
import { defineKind, type JSONSchemaProps, type KubeObject } from "@capstan/core";
import {
  type ConfigResourceStatus,
  MONITORING_GROUP,
  MONITORING_VERSION,
  monitorCrd,
  PROMETHEUS_DURATION_PATTERN,
} from "./monitoring-common.ts";

/** One alerting rule (alert) or recording rule (record). */
export interface Rule {
  record?: string;
  alert?: string;
  /** A PromQL expression (prometheus-operator also accepts a number). */
  expr: string | number;
  /** How long the condition holds before the alert fires, a Prometheus duration. */
  for?: string;
  keep_firing_for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** A group of rules evaluated together. */
export interface RuleGroup {
  name: string;
  /** Evaluation interval of the group (default: the server's evaluationInterval). */
  interval?: string;
  labels?: Record<string, string>;
  query_offset?: string;
  limit?: number;
  rules?: Rule[];
}

export interface PrometheusRuleSpec {
  groups?: RuleGroup[];
  [field: string]: unknown;
}

export interface PrometheusRule extends KubeObject {
  spec: PrometheusRuleSpec;
  status?: ConfigResourceStatus;
}

export const PrometheusRuleKind = defineKind<PrometheusRule>({
  group: MONITORING_GROUP,
  version: MONITORING_VERSION,
  kind: "PrometheusRule",
  plural: "prometheusrules",
  namespaced: true,
});

const duration = (description: string): JSONSchemaProps => ({
  type: "string",
  description,
  pattern: PROMETHEUS_DURATION_PATTERN,
});
const stringMap = (description: string): JSONSchemaProps => ({
  type: "object",
  additionalProperties: { type: "string" },
  description,
});

/** `spec` of PrometheusRule (before keepUnknownFields opens it). */
export const prometheusRuleSpecSchema: JSONSchemaProps = {
  type: "object",
  description: "Rule groups.",
  properties: {
    groups: {
      type: "array",
      description: "The rule groups, each evaluated at its own interval.",
      "x-kubernetes-list-type": "map",
      "x-kubernetes-list-map-keys": ["name"],
      items: {
        type: "object",
        required: ["name"],
        properties: {
          name: { type: "string", minLength: 1, description: "Name of the group, unique in the object." },
          interval: duration("Evaluation interval (default: the server's evaluationInterval)."),
          labels: stringMap("Labels added to every rule of the group."),
          query_offset: duration("How far back the group's queries look."),
          limit: { type: "integer", description: "Most alerts or series a rule may produce (0: no limit)." },
          rules: {
            type: "array",
            description: "Alerting rules (alert) and recording rules (record).",
            items: {
              type: "object",
              required: ["expr"],
              properties: {
                record: { type: "string", description: "Name of the series a recording rule writes." },
                alert: { type: "string", description: "Name of the alert." },
                expr: {
                  anyOf: [{ type: "integer" }, { type: "string" }],
                  "x-kubernetes-int-or-string": true,
                  description: "The PromQL expression.",
                },
                for: duration("How long the condition must hold before the alert fires."),
                keep_firing_for: duration("How long the alert keeps firing after the condition clears."),
                labels: stringMap("Labels added to the alert or series."),
                annotations: stringMap("Annotations of the alert."),
              },
            },
          },
        },
      },
    },
  },
};

/** The PrometheusRule CRD, installed by the chart only where the cluster has none. */
export function prometheusRuleCrd() {
  return monitorCrd({
    kind: "PrometheusRule",
    plural: "prometheusrules",
    singular: "prometheusrule",
    shortName: "promrule",
    description:
      "PrometheusRule (prometheus-operator's API): alerting and recording rule groups a Prometheus loads when it selects the object.",
    spec: prometheusRuleSpecSchema,
  });
}
