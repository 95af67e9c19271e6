// The __Kind__ schema: what the API server will accept, checked on the schema itself (the CEL rules run on a
// real API server in the e2e suite).
import { describe, expect, expectTypeOf, it } from "vitest";
import { __Kind__Kind, type __Kind__Spec, __kind__Crd, GROUP } from "./__kind__.ts";

/** The parts of a JSON schema node these tests read. */
interface SchemaNode {
  required?: string[];
  properties?: Record<string, SchemaNode>;
  additionalProperties?: unknown;
  "x-kubernetes-validations"?: { rule: string }[];
}

describe("the __Kind__ CRD", () => {
  const crd = __kind__Crd();
  const version = crd.spec.versions[0]!;
  const spec = (version.schema?.openAPIV3Schema as SchemaNode | undefined)?.properties?.spec;

  it("is named <plural>.<group> and serves v1alpha1 with a status subresource", () => {
    expect(crd.metadata.name).toBe(`${__Kind__Kind.plural}.${GROUP}`);
    expect(version).toMatchObject({
      name: "v1alpha1",
      served: true,
      storage: true,
      subresources: { status: {} },
    });
  });

  it("requires spec.data, a map of strings with ConfigMap-key names", () => {
    expect(spec?.required).toEqual(["data"]);
    expect(spec?.properties?.data?.additionalProperties).toEqual({ type: "string" });
    expect(spec?.properties?.data?.["x-kubernetes-validations"]?.[0]?.rule).toContain("matches");
  });

  it("gives the TypeScript type of spec from the schema (a field the schema lacks is a type error)", () => {
    expectTypeOf<__Kind__Spec>().toEqualTypeOf<{ data: Record<string, string>; paused?: boolean }>();
    // @ts-expect-error: spec has no field `replicas` until the schema adds one.
    const _replicas: __Kind__Spec["replicas"] = undefined;
  });
});
