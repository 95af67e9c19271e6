// Renders the operator's CRDs as YAML, the form committed under crds/ and shipped in the chart.
import { stringify } from "yaml";
import { etcdClusterCrd } from "./etcd-cluster.ts";

/** File name (under crds/) and YAML text of each CRD the operator owns. */
export function renderCrds(): { file: string; yaml: string }[] {
  const crd = etcdClusterCrd();
  return [{ file: `${crd.metadata.name}.yaml`, yaml: toYaml(crd) }];
}

function toYaml(doc: unknown): string {
  const header = "# Generated from operators/etcd/src/api by scripts/gen-crd.ts; do not edit.\n";
  return header + stringify(doc, { lineWidth: 0, aliasDuplicateObjects: false });
}
