// The CRDs of the Vault operator, for `capstan crd` (crds/*.yaml, and the chart's copies and the docs reference
// once those are declared in package.json's "capstan" field).
import type { CustomResourceDefinitionObject } from "@capstan/core";
import { vaultClusterCrd } from "./vault-cluster.ts";

export const crds: CustomResourceDefinitionObject[] = [vaultClusterCrd()];
