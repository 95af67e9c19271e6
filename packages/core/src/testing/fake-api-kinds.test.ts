// Table tests of the kinds a fake API server serves: built in, registered, learnt from a write to an unknown
// collection, and learnt from a CRD (every served version).
import { describe, expect, it } from "vitest";
import type { KubeObject } from "../api/object.ts";
import { BUILT_IN_KINDS, KindRegistry } from "./fake-api-kinds.ts";
import { parsePath } from "./fake-api-protocol.ts";
import type { Verb } from "./fake-api-types.ts";

const widget = {
  apiVersion: "test.capstan.dev/v1",
  kind: "Widget",
  metadata: { name: "w", namespace: "ns" },
};
const crd = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "gadgets.test.capstan.dev" },
  spec: {
    group: "test.capstan.dev",
    scope: "Cluster",
    names: { kind: "Gadget", plural: "gadgets" },
    versions: [{ name: "v1" }, { name: "v2" }],
  },
};

describe("KindRegistry.learn", () => {
  it.each<[string, string, Verb, unknown, string, string | undefined]>([
    [
      "a create in an unknown collection",
      "/apis/test.capstan.dev/v1/namespaces/ns/widgets",
      "create",
      widget,
      "/apis/test.capstan.dev/v1/widgets",
      "Widget",
    ],
    [
      "an apply in an unknown collection",
      "/apis/test.capstan.dev/v1/namespaces/ns/widgets/w",
      "apply",
      widget,
      "/apis/test.capstan.dev/v1/widgets",
      "Widget",
    ],
    [
      "a read teaches nothing",
      "/apis/test.capstan.dev/v1/namespaces/ns/widgets/w",
      "get",
      widget,
      "/apis/test.capstan.dev/v1/widgets",
      undefined,
    ],
    [
      "a body of another apiVersion teaches nothing",
      "/apis/other.dev/v1/namespaces/ns/widgets",
      "create",
      widget,
      "/apis/other.dev/v1/widgets",
      undefined,
    ],
    [
      "a CRD: its first version",
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
      "create",
      crd,
      "/apis/test.capstan.dev/v1/gadgets",
      "Gadget",
    ],
    [
      "a CRD: its second version",
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
      "create",
      crd,
      "/apis/test.capstan.dev/v2/gadgets",
      "Gadget",
    ],
  ])("%s", (_, path, verb, body, collection, kind) => {
    const kinds = new KindRegistry();
    kinds.register(...BUILT_IN_KINDS);
    kinds.learn(parsePath(path), verb, body);
    expect(kinds.kindName(collection)).toBe(kind);
  });

  it("learns a CRD's scope: a Cluster-scoped kind is not namespaced", () => {
    const kinds = new KindRegistry();
    kinds.register(...BUILT_IN_KINDS);
    kinds.learn(parsePath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions"), "create", crd);
    expect(
      kinds.kindFor({ apiVersion: "test.capstan.dev/v2", kind: "Gadget", metadata: {} })?.namespaced,
    ).toBe(false);
  });
});

describe("KindRegistry.kindOf", () => {
  it("names what to register for an unknown kind", () => {
    const kinds = new KindRegistry();
    kinds.register(...BUILT_IN_KINDS);
    expect(kinds.kindOf({ apiVersion: "v1", kind: "ConfigMap", metadata: {} }).plural).toBe("configmaps");
    expect(() => kinds.kindOf(widget as KubeObject)).toThrow(
      /unknown kind test.capstan.dev\/v1 Widget of object ns\/w/,
    );
  });
});
