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

/**
 * The chart's copy of a generated CRD (`templates/crds/<file>`): the same YAML behind `crds.enabled`, with
 * `helm.sh/resource-policy: keep` so `helm upgrade` updates the CRD and `helm uninstall` keeps it (and every
 * custom resource). `yaml` must have a top-level `metadata:` without annotations, as {@link renderCrdYaml} writes;
 * `packageName` is the operator package whose `crds/<file>` it copies.
 */
export function renderChartCrd(file: string, yaml: string, packageName: string): string {
  const metadata = "\nmetadata:\n";
  const at = yaml.indexOf(metadata);
  if (at < 0 || yaml.includes(`${metadata}  annotations:`)) {
    throw new Error(`crds/${file}: expected a top-level "metadata:" without annotations`);
  }
  const end = at + metadata.length;
  const body = `${yaml.slice(0, end)}  annotations:\n    helm.sh/resource-policy: keep\n${yaml.slice(end)}`;
  return (
    `{{- /* Copy of crds/${file} of ${packageName} with helm.sh/resource-policy: keep, written by capstan crd; do not edit. */}}\n` +
    `{{- if .Values.crds.enabled }}\n${body}{{- end }}\n`
  );
}
