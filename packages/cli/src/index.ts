/**
 * @capstan/cli: the library behind the `capstan` command (CRD YAML, Markdown reference, chart copies, drift).
 * The chart-test helpers are in @capstan/cli/chart.
 *
 * @module @capstan/cli
 */

export {
  type ChartValuesSpec,
  formatJson,
  IMAGE_VALUE_REF,
  imageValueSchema,
  type JsonSchema,
  operatorValuesSchema,
} from "./chart-values.ts";
export { runCli } from "./cli.ts";
export { type OperatorConfig, readOperatorConfig } from "./config.ts";
export {
  type CrdPlan,
  crdDrift,
  type Drift,
  formatDrift,
  type GeneratedFile,
  loadCrds,
  planCrdFiles,
  planDrift,
  writePlan,
} from "./crd-files.ts";
export {
  beginMarker,
  endMarker,
  extractGeneratedBlock,
  renderCrdReference,
  spliceGeneratedBlock,
} from "./crd-reference.ts";
export { chartCrdDir, crdFileName, INSTALL_IF_ABSENT, renderChartCrd, renderCrdYaml } from "./crd-yaml.ts";
export {
  type AccessRule,
  DEFAULT_MANAGER_ACCESS,
  type DerivedRule,
  deriveRules,
  formatRules,
  type ManagerAccess,
  type NonResourceAccessRule,
  type OperatorAccess,
  READ,
  type Scope,
  type Verb,
} from "./rbac.ts";
export { compareRbac, loadAccess, RBAC_MODES, type RbacMode, rbacDrift } from "./rbac-check.ts";
export { textDiff } from "./text-diff.ts";
