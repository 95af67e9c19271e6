// The CRDs of the __name__ operator, for `capstan crd` (crds/*.yaml, the chart's copies and values schema, and
// the reference in docs/operators/__name__.md).
import type { CustomResourceDefinitionObject } from "@capstan/core";
import { __kind__Crd } from "./__kind__.ts";

export const crds: CustomResourceDefinitionObject[] = [__kind__Crd()];
