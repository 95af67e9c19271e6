// Tests of the generated values schema's image values: an operator's `{ $ref: IMAGE_VALUE_REF }` becomes the image
// schema (map or string) wherever it is declared, keeping its own description; other references stay as they are.
import { describe, expect, it } from "vitest";
import { IMAGE_VALUE_REF, imageValueSchema, type JsonSchema, operatorValuesSchema } from "./chart-values.ts";

describe("operatorValuesSchema's image values", () => {
  const schema = operatorValuesSchema("x-operator", ["Widget"], {
    properties: {
      sidecarImage: { $ref: IMAGE_VALUE_REF, description: "The sidecar." },
      backup: {
        type: "object",
        additionalProperties: false,
        properties: { image: { $ref: IMAGE_VALUE_REF }, labels: { $ref: "#/definitions/stringMap" } },
      },
    },
  });
  const props = schema.properties as Record<string, JsonSchema>;

  it("expands each one, at any depth, into the image schema with its own description", () => {
    expect(props.sidecarImage).toEqual(imageValueSchema("The sidecar."));
    const backup = props.backup?.properties as Record<string, JsonSchema>;
    expect(backup.image).toEqual(imageValueSchema());
    expect(backup.labels).toEqual({ $ref: "#/definitions/stringMap" });
    expect(JSON.stringify(schema)).not.toContain(IMAGE_VALUE_REF);
  });

  it("takes the map form (registry, repository, tag, digest: no other key) or one string without spaces", () => {
    const image = imageValueSchema();
    expect(image.type).toEqual(["object", "string"]);
    expect(image.additionalProperties).toBe(false);
    expect(Object.keys(image.properties as object)).toEqual(["registry", "repository", "tag", "digest"]);
    const pattern = new RegExp(image.pattern as string);
    expect(pattern.test("capstan.local/busybox:1")).toBe(true);
    expect(pattern.test("busybox 1.37")).toBe(false);
    // The digest as the operator image's: the same rule.
    const fields = (node: JsonSchema | undefined) => (node?.properties ?? {}) as Record<string, JsonSchema>;
    expect(fields(image).digest?.pattern).toBe(fields(props.image).digest?.pattern);
    expect(fields(image).digest?.pattern).toBeDefined();
  });
});
