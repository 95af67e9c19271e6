// Renders a CustomResourceDefinition as the YAML an operator commits under crds/ and ships in its chart.
import type { CustomResourceDefinitionObject } from "@capstan/core";
import { stringify } from "yaml";

/** The file name of a CRD's YAML: `<plural>.<group>.yaml`, which is also the CRD's `metadata.name`. */
export function crdFileName(crd: CustomResourceDefinitionObject): string {
  return `${crd.metadata.name}.yaml`;
}

/**
 * The YAML text of `crd`: a "do not edit" header naming `source` (what it is generated from, e.g.
 * "src/api/crds.ts in @capstan/etcd-operator"), then the object in its own key order, no line folding and no
 * YAML aliases, so the text depends only on `crd` and can be committed and compared.
 */
export function renderCrdYaml(crd: CustomResourceDefinitionObject, source: string): string {
  const header = `# Generated from ${source} by capstan crd; do not edit.\n`;
  return header + stringify(crd, { lineWidth: 0, aliasDuplicateObjects: false });
}

/** The annotation that marks a CRD another project may own (e.g. monitoring.coreos.com's, which prometheus-operator
 * also installs): the chart ships it in Helm's `crds/` directory, which Helm creates before it renders the chart,
 * only where the cluster has no CRD of that name, and never upgrades or deletes. */
export const INSTALL_IF_ABSENT = "capstan.dev/install-if-absent";

/** Whether `crd` is annotated {@link INSTALL_IF_ABSENT}. */
function installIfAbsent(crd: CustomResourceDefinitionObject): boolean {
  return crd.metadata.annotations?.[INSTALL_IF_ABSENT] === "true";
}

/**
 * Where a chart keeps its copy of `crd`, relative to the chart: Helm's `crds/` for a CRD annotated
 * {@link INSTALL_IF_ABSENT}, else `templates/crds/`.
 */
export function chartCrdDir(crd: CustomResourceDefinitionObject): "crds" | "templates/crds" {
  return installIfAbsent(crd) ? "crds" : "templates/crds";
}

/**
 * The chart's copy of a generated CRD, in the directory {@link chartCrdDir} names. `yaml` must have a top-level
 * `metadata:` as {@link renderCrdYaml} writes; `packageName` is the operator package whose `crds/<file>` it copies.
 *
 * A CRD of `templates/crds/` is the same YAML behind `crds.enabled`, with `helm.sh/resource-policy: keep` so
 * `helm upgrade` updates the CRD and `helm uninstall` keeps it (and every custom resource); `options.labels` names
 * a template (e.g. capstan-operator.crdLabels) that gives it its labels.
 *
 * A CRD annotated {@link INSTALL_IF_ABSENT} goes to Helm's `crds/` as it is, under a header saying what Helm does
 * with it: `helm install` creates it before rendering the templates (so they may use its kind) where the cluster has
 * none of that name, and `helm upgrade` and `helm uninstall` never change it, so one another chart installed is
 * left as it is. Helm does not render `crds/`: it gets `options.staticLabels`, if any, instead of a template.
 */
export function renderChartCrd(
  file: string,
  yaml: string,
  packageName: string,
  options: { labels?: string; staticLabels?: Record<string, string> } = {},
): string {
  const metadata = "\nmetadata:\n";
  const at = yaml.indexOf(metadata);
  if (at < 0) throw new Error(`crds/${file}: expected a top-level "metadata:"`);
  const end = at + metadata.length;
  const head = yaml.slice(0, end);
  const rest = yaml.slice(end);
  const nextTopLevel = rest.search(/^\S/m);
  // A chart on the capstan-operator library labels its CRDs as its other objects.
  if (
    (options.labels !== undefined || options.staticLabels !== undefined) &&
    /^ {2}labels:\n/m.test(rest.slice(0, nextTopLevel < 0 ? undefined : nextTopLevel))
  ) {
    throw new Error(
      `crds/${file}: metadata.labels is set, but the chart gives its CRDs their labels: remove them from the CRD in the schema module`,
    );
  }
  if (yaml.includes(`${INSTALL_IF_ABSENT}: "true"`)) {
    const labels = Object.entries(options.staticLabels ?? {});
    const labelled =
      labels.length === 0
        ? yaml
        : `${head}  labels:\n${labels.map(([k, v]) => `    ${k}: ${JSON.stringify(v)}\n`).join("")}${rest}`;
    return (
      `# Copy of crds/${file} of ${packageName}, written by capstan crd; do not edit.\n` +
      `# Helm's crds/ directory (${INSTALL_IF_ABSENT}): helm install creates this CRD before it renders the\n` +
      "# templates, and only where the cluster has no CRD of this name (--skip-crds: not at all); helm upgrade and\n" +
      "# helm uninstall never change it. Helm does not render this file, so it holds no template and fixed labels.\n" +
      labelled
    );
  }
  const keep = "    helm.sh/resource-policy: keep\n";
  const annotations = /^ {2}annotations:\n/m;
  // Annotations are the first or second key under metadata (after name), as renderCrdYaml writes them.
  const m = annotations.exec(rest);
  const annotated =
    m !== null && (nextTopLevel < 0 || m.index < nextTopLevel)
      ? `${head}${rest.slice(0, m.index + m[0].length)}${keep}${rest.slice(m.index + m[0].length)}`
      : `${head}  annotations:\n${keep}${rest}`;
  const body =
    options.labels === undefined
      ? annotated
      : `${head}  labels:\n    {{- include ${JSON.stringify(options.labels)} . | nindent 4 }}\n${annotated.slice(end)}`;
  const header = `{{- /* Copy of crds/${file} of ${packageName} with helm.sh/resource-policy: keep, written by capstan crd; do not edit. */}}\n`;
  return `${header}{{- if .Values.crds.enabled }}\n${body}{{- end }}\n`;
}
