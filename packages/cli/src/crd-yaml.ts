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
 * also installs): the chart creates it only where no such CRD exists, and never changes one it did not create. */
export const INSTALL_IF_ABSENT = "capstan.dev/install-if-absent";

/**
 * The chart's copy of a generated CRD (`templates/crds/<file>`): the same YAML behind `crds.enabled`, with
 * `helm.sh/resource-policy: keep` so `helm upgrade` updates the CRD and `helm uninstall` keeps it (and every
 * custom resource). `yaml` must have a top-level `metadata:` as {@link renderCrdYaml} writes; `packageName` is the
 * operator package whose `crds/<file>` it copies.
 *
 * A CRD annotated {@link INSTALL_IF_ABSENT} is rendered only when the cluster has no CRD of that name, or has the
 * one this release made (Helm's release annotations on it): so a CRD another chart installed is never changed, and
 * this release keeps updating its own. `helm template`, with no cluster to look in, renders it.
 *
 * `options.labels` names a template (e.g. capstan-operator.crdLabels) that gives the CRD's labels.
 */
export function renderChartCrd(
  file: string,
  yaml: string,
  packageName: string,
  options: { labels?: string } = {},
): string {
  const metadata = "\nmetadata:\n";
  const at = yaml.indexOf(metadata);
  if (at < 0) throw new Error(`crds/${file}: expected a top-level "metadata:"`);
  const end = at + metadata.length;
  const keep = "    helm.sh/resource-policy: keep\n";
  const annotations = /^ {2}annotations:\n/m;
  const head = yaml.slice(0, end);
  const rest = yaml.slice(end);
  // Annotations are the first or second key under metadata (after name), as renderCrdYaml writes them.
  const m = annotations.exec(rest);
  const nextTopLevel = rest.search(/^\S/m);
  const annotated =
    m !== null && (nextTopLevel < 0 || m.index < nextTopLevel)
      ? `${head}${rest.slice(0, m.index + m[0].length)}${keep}${rest.slice(m.index + m[0].length)}`
      : `${head}  annotations:\n${keep}${rest}`;
  // A chart on the capstan-operator library labels its CRDs as its other objects (global.commonLabels too).
  if (
    options.labels !== undefined &&
    /^ {2}labels:\n/m.test(rest.slice(0, nextTopLevel < 0 ? undefined : nextTopLevel))
  ) {
    throw new Error(
      `crds/${file}: metadata.labels is set, but the chart gives its CRDs their labels: remove them from the CRD in the schema module`,
    );
  }
  const body =
    options.labels === undefined
      ? annotated
      : `${head}  labels:\n    {{- include ${JSON.stringify(options.labels)} . | nindent 4 }}\n${annotated.slice(end)}`;
  const ifAbsent = yaml.includes(`${INSTALL_IF_ABSENT}: "true"`);
  const header = `{{- /* Copy of crds/${file} of ${packageName} with helm.sh/resource-policy: keep, written by capstan crd; do not edit. */}}\n`;
  if (!ifAbsent) return `${header}{{- if .Values.crds.enabled }}\n${body}{{- end }}\n`;
  const name = file.replace(/\.yaml$/, "");
  return (
    header +
    `{{- /* Installed only where absent (${INSTALL_IF_ABSENT}): a ${name} another chart installed is left as it is. */}}\n` +
    `{{- $existing := lookup "apiextensions.k8s.io/v1" "CustomResourceDefinition" "" "${name}" }}\n` +
    `{{- $ours := and $existing (eq (dig "metadata" "annotations" "meta.helm.sh/release-name" "" $existing) .Release.Name) (eq (dig "metadata" "annotations" "meta.helm.sh/release-namespace" "" $existing) .Release.Namespace) }}\n` +
    `{{- if and .Values.crds.enabled (or (not $existing) $ours) }}\n${body}{{- end }}\n`
  );
}
