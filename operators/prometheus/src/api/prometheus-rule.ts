// PrometheusRule (monitoring.coreos.com/v1): alerting and recording rule groups, as prometheus-operator defines
// them: a CRD schema that keeps every field it does not model, and the types it gives.
import { defineKind, type KubeObject, stringMapSchema } from "@capstan/core";
import * as Type from "typebox/type";
import {
  type ConfigResourceStatus,
  MONITORING_GROUP,
  MONITORING_VERSION,
  monitorCrd,
  PROMETHEUS_DURATION_PATTERN,
} from "./monitoring-common.ts";

const duration = (description: string) =>
  Type.Optional(Type.String({ description, pattern: PROMETHEUS_DURATION_PATTERN }));

const ruleSchema = Type.Object({
  record: Type.Optional(Type.String({ description: "Name of the series a recording rule writes." })),
  alert: Type.Optional(Type.String({ description: "Name of the alert." })),
  // A PromQL expression (prometheus-operator also accepts a number).
  expr: Type.Unsafe<string | number>({
    anyOf: [{ type: "integer" }, { type: "string" }],
    "x-kubernetes-int-or-string": true,
    description: "The PromQL expression.",
  }),
  for: duration("How long the condition must hold before the alert fires."),
  keep_firing_for: duration("How long the alert keeps firing after the condition clears."),
  labels: Type.Optional(stringMapSchema("Labels added to the alert or series.")),
  annotations: Type.Optional(stringMapSchema("Annotations of the alert.")),
});

/** One alerting rule (alert) or recording rule (record). */
export type Rule = Type.Static<typeof ruleSchema>;

const ruleGroupSchema = Type.Object({
  name: Type.String({ minLength: 1, description: "Name of the group, unique in the object." }),
  interval: duration("Evaluation interval (default: the server's evaluationInterval)."),
  labels: Type.Optional(stringMapSchema("Labels added to every rule of the group.")),
  query_offset: duration("How far back the group's queries look."),
  limit: Type.Optional(
    Type.Integer({ description: "Most alerts or series a rule may produce (0: no limit)." }),
  ),
  rules: Type.Optional(
    Type.Array(ruleSchema, { description: "Alerting rules (alert) and recording rules (record)." }),
  ),
});

/** A group of rules evaluated together. */
export type RuleGroup = Type.Static<typeof ruleGroupSchema>;

/** `spec` of PrometheusRule (before keepUnknownFields opens it). */
export const prometheusRuleSpecSchema = Type.Object(
  {
    groups: Type.Optional(
      Type.Array(ruleGroupSchema, {
        description: "The rule groups, each evaluated at its own interval.",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
      }),
    ),
  },
  { description: "Rule groups." },
);

/** `spec` of a PrometheusRule; fields this operator does not read are kept as they are. */
export type PrometheusRuleSpec = Type.Static<typeof prometheusRuleSpecSchema> & { [field: string]: unknown };

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
