// spec.network and spec.auth: the types derived from the schema are what the code reads.
import { describe, expect, expectTypeOf, it } from "vitest";
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
const network = networkSchema as unknown as Schema;
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
    ["auth", authKeys, authSchema as unknown as Schema],
  ] as const)("%s", (_path, keys, schema) => {
    expect(names(schema)).toEqual(Object.keys(keys).sort());
  });
});

describe("spec.network and spec.auth types derived from the schema", () => {
  it("types the fields the code reads", () => {
    expectTypeOf<EtcdAuth["enabled"]>().toEqualTypeOf<boolean>();
    expectTypeOf<EtcdAuth["rootSecretRef"]>().toEqualTypeOf<{ name: string } | undefined>();
    expectTypeOf<EtcdNetwork["clientSelectors"]>().toEqualTypeOf<EtcdClientSelector[] | undefined>();
    expectTypeOf<EtcdClientSelector["podSelector"]>().toEqualTypeOf<LabelSelectorSpec | undefined>();
    type Expression = NonNullable<LabelSelectorSpec["matchExpressions"]>[number];
    expectTypeOf<Expression["operator"]>().toEqualTypeOf<"In" | "NotIn" | "Exists" | "DoesNotExist">();
  });
  it("refuses a field the schema lacks", () => {
    // @ts-expect-error the CRD has no spec.auth.rootUser (the user is always root)
    const auth: EtcdAuth = { enabled: true, rootUser: "admin" };
    expect(auth.enabled).toBe(true);
  });
});
