// spec.network and spec.auth: the hand-written types name the same properties as the schema.
import { describe, expect, it } from "vitest";
import {
  authSchema,
  type EtcdAuth,
  type EtcdClientSelector,
  type EtcdNetwork,
  type LabelSelectorSpec,
  networkSchema,
} from "./etcd-cluster-access.ts";

type Schema = { properties?: Record<string, Schema>; items?: Schema; [key: string]: unknown };
const names = (s: Schema | undefined) => Object.keys(s?.properties ?? {}).sort();
const network = networkSchema as Schema;
const selector = network.properties!.clientSelectors!.items!;

const networkKeys: Record<keyof EtcdNetwork, true> = { networkPolicy: true, clientSelectors: true };
const selectorKeys: Record<keyof EtcdClientSelector, true> = { podSelector: true, namespaceSelector: true };
const labelSelectorKeys: Record<keyof LabelSelectorSpec, true> = {
  matchLabels: true,
  matchExpressions: true,
};
const authKeys: Record<keyof EtcdAuth, true> = { enabled: true, rootSecretRef: true };

describe("EtcdCluster spec.network and spec.auth types match the schema", () => {
  it.each([
    ["network", networkKeys, network],
    ["network.clientSelectors[]", selectorKeys, selector],
    ["network.clientSelectors[].podSelector", labelSelectorKeys, selector.properties!.podSelector],
    ["auth", authKeys, authSchema as Schema],
  ] as const)("%s", (_path, keys, schema) => {
    expect(names(schema)).toEqual(Object.keys(keys).sort());
  });
});
