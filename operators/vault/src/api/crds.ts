// The CRDs of the Vault operator, for `capstan crd` (crds/*.yaml, and the chart's copies and the docs reference
// once those are declared in package.json's "capstan" field).
import type { ChartValuesSpec } from "@capstan/cli";
import type { CustomResourceDefinitionObject } from "@capstan/core";
import { vaultClusterCrd } from "./vault-cluster.ts";
import { vaultRecoveryCrd } from "./vault-recovery.ts";

export const crds: CustomResourceDefinitionObject[] = [vaultClusterCrd(), vaultRecoveryCrd()];

/** The chart's own values, beside those of every operator chart (capstan crd writes values.schema.json). */
export const chartValues: ChartValuesSpec = {
  properties: {
    reloaderImage: {
      description:
        "Image of the Vault pods' certificate-reload sidecar (a shell that signals vault on a certificate change).",
      type: "string",
      minLength: 1,
      pattern: "^[^\\s]+$",
    },
  },
};
