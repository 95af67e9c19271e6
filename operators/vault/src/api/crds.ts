// The CRDs of the Vault operator, for `capstan crd` (crds/*.yaml, and the chart's copies and the docs reference
// once those are declared in package.json's "capstan" field).
import type { CustomResourceDefinitionObject, JSONSchemaProps } from "@capstan/core";
import { vaultClusterCrd } from "./vault-cluster.ts";
import { vaultRecoveryCrd } from "./vault-recovery.ts";
import { vaultSnapshotCrd } from "./vault-snapshot.ts";
import { vaultSnapshotScheduleCrd } from "./vault-snapshot-schedule.ts";

export const crds: CustomResourceDefinitionObject[] = [
  vaultClusterCrd(),
  vaultRecoveryCrd(),
  vaultSnapshotCrd(),
  vaultSnapshotScheduleCrd(),
];

/**
 * The chart's own values, beside those of every operator chart (capstan crd writes values.schema.json). Typed with
 * core's JSONSchemaProps, not @capstan/cli's ChartValuesSpec: the operator's published types must not need its build
 * tools (@capstan/cli is a devDependency).
 */
export const chartValues: { properties: Record<string, JSONSchemaProps> } = {
  properties: {
    // An image value (registry, repository, tag, digest; or one string): capstan crd writes its schema.
    reloaderImage: {
      $ref: "#/definitions/image",
      description:
        "Image of the Vault pods' certificate-reload sidecar (a shell that signals vault on a certificate change).",
    },
  },
};
