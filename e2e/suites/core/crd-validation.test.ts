// A test CRD with schema bounds and CEL rules: the real API server rejects bad objects with the rule's message.
import {
  type Client,
  CustomResourceDefinition,
  defineKind,
  isInvalid,
  type KubeObject,
  type ObjectOf,
} from "@capstan/core";
import { applyCrd, connect, createNamespace, deleteAndWait, type TestNamespace } from "@capstan/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

interface Gadget extends KubeObject {
  spec: { replicas: number; storageClass?: string };
}
const Gadget = defineKind<Gadget>({
  group: "it.capstan.dev",
  version: "v1",
  kind: "Gadget",
  plural: "gadgets",
  namespaced: true,
});

const crd: ObjectOf<typeof CustomResourceDefinition> = {
  metadata: { name: "gadgets.it.capstan.dev" },
  spec: {
    group: "it.capstan.dev",
    scope: "Namespaced",
    names: { kind: "Gadget", plural: "gadgets", singular: "gadget" },
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: {
              spec: {
                type: "object",
                required: ["replicas"],
                properties: {
                  replicas: { type: "integer", minimum: 1, maximum: 9 },
                  storageClass: { type: "string" },
                },
                "x-kubernetes-validations": [
                  { rule: "self.replicas % 2 == 1", message: "spec.replicas must be odd to keep a quorum" },
                  {
                    rule: "!has(oldSelf.storageClass) || (has(self.storageClass) && self.storageClass == oldSelf.storageClass)",
                    message: "spec.storageClass is immutable",
                  },
                ],
              },
            },
          },
        },
      },
    ],
  },
};

let client: Client;
let ns: TestNamespace;

beforeAll(async () => {
  ({ client } = connect());
  await applyCrd(client, crd);
  ns = await createNamespace(client, "crd");
});
afterAll(async () => {
  await ns?.cleanup();
  await deleteAndWait(client, CustomResourceDefinition, crd);
  await client?.close();
});

function gadget(name: string, spec: Gadget["spec"]): Gadget {
  return { metadata: { name, namespace: ns.name }, spec };
}

async function rejection(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, "the API server accepted an invalid object").toBeDefined();
  expect(isInvalid(err)).toBe(true);
  return (err as Error).message;
}

describe("CRD validation on the real API server", () => {
  it("accepts a valid object", async () => {
    const g = await client.create(Gadget, gadget("ok", { replicas: 3, storageClass: "fast" }));
    expect(g.spec.replicas).toBe(3);
  });

  it("rejects out-of-bounds values with the schema's message", async () => {
    expect(await rejection(client.create(Gadget, gadget("zero", { replicas: 0 })))).toMatch(
      /spec.replicas.*should be greater than or equal to 1/,
    );
    expect(await rejection(client.create(Gadget, gadget("ten", { replicas: 11 })))).toMatch(
      /spec.replicas.*should be less than or equal to 9/,
    );
  });

  it("rejects a CEL rule violation with the rule's message", async () => {
    expect(await rejection(client.create(Gadget, gadget("even", { replicas: 4 })))).toContain(
      "spec.replicas must be odd to keep a quorum",
    );
  });

  it("enforces a transition rule (immutable field)", async () => {
    await client.create(Gadget, gadget("immutable", { replicas: 1, storageClass: "fast" }));
    expect(
      await rejection(client.patch(Gadget, "immutable", ns.name, { spec: { storageClass: "slow" } })),
    ).toContain("spec.storageClass is immutable");
  });
});
