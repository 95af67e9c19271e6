// Tests of the shared CRD schema fragments: the patterns against values the API server accepts and refuses,
// and the fragments' exact shape (the generated CRD YAML of every operator depends on it).
import * as Type from "typebox/type";
import { describe, expect, expectTypeOf, it } from "vitest";
import type { Condition } from "../helpers/conditions.ts";
import {
  conditionSchema,
  conditionsSchema,
  type Defaulted,
  GO_DURATION_PATTERN,
  goDurationSchema,
  parseGoDuration,
  passThroughObjectSchema,
  podPlacementProperties,
  QUANTITY_PATTERN,
  quantitySchema,
  type ResourceQuantities,
  resourcesSchema,
  STORAGE_SIZE_PATTERN,
  storageSizeBytes,
  stringMapSchema,
  type Toleration,
} from "./schema.ts";

describe("patterns", () => {
  it.each([
    [QUANTITY_PATTERN, "500m", true],
    [QUANTITY_PATTERN, "1Gi", true],
    [QUANTITY_PATTERN, "2", true],
    [QUANTITY_PATTERN, "1.5", true],
    [QUANTITY_PATTERN, "1e3", true],
    [QUANTITY_PATTERN, "-1", true],
    [QUANTITY_PATTERN, "1GB", false],
    [QUANTITY_PATTERN, "one", false],
    [QUANTITY_PATTERN, "", false],
    [STORAGE_SIZE_PATTERN, "8Gi", true],
    [STORAGE_SIZE_PATTERN, "1.5T", true],
    [STORAGE_SIZE_PATTERN, "1024", true],
    [STORAGE_SIZE_PATTERN, "500m", false],
    [STORAGE_SIZE_PATTERN, "-1Gi", false],
    [STORAGE_SIZE_PATTERN, "8 Gi", false],
    [GO_DURATION_PATTERN, "2160h", true],
    [GO_DURATION_PATTERN, "1h30m", true],
    [GO_DURATION_PATTERN, "1.5s", true],
    [GO_DURATION_PATTERN, "250ms", true],
    [GO_DURATION_PATTERN, "90", false],
    [GO_DURATION_PATTERN, "1d", false],
    [GO_DURATION_PATTERN, "h", false],
  ])("%s matches %j: %s", (pattern, value, expected) => {
    expect(new RegExp(pattern).test(value)).toBe(expected);
  });
});

describe("fragments", () => {
  it("stringMapSchema", () => {
    expect(stringMapSchema("Extra labels.")).toEqual({
      type: "object",
      additionalProperties: { type: "string" },
      description: "Extra labels.",
    });
  });

  it("resourcesSchema: limits and requests of int-or-string quantities", () => {
    expect(resourcesSchema("R.")).toEqual({
      type: "object",
      description: "R.",
      properties: {
        limits: { type: "object", additionalProperties: quantitySchema },
        requests: { type: "object", additionalProperties: quantitySchema },
      },
    });
    expect(quantitySchema).toMatchObject({ "x-kubernetes-int-or-string": true, pattern: QUANTITY_PATTERN });
  });

  it("passThroughObjectSchema keeps unknown fields", () => {
    expect(passThroughObjectSchema("A.")).toEqual({
      type: "object",
      description: "A.",
      "x-kubernetes-preserve-unknown-fields": true,
    });
  });

  it("goDurationSchema", () => {
    expect(goDurationSchema("D.", "1h")).toEqual({
      type: "string",
      description: "D.",
      default: "1h",
      maxLength: 32,
      pattern: GO_DURATION_PATTERN,
    });
  });

  it("conditionsSchema: a map list keyed by type of metav1.Condition", () => {
    expect(conditionsSchema("C.")).toEqual({
      type: "array",
      description: "C.",
      items: conditionSchema,
      "x-kubernetes-list-type": "map",
      "x-kubernetes-list-map-keys": ["type"],
    });
    expect((conditionSchema as { required?: unknown }).required).toEqual([
      "type",
      "status",
      "reason",
      "message",
      "lastTransitionTime",
    ]);
  });

  it("types what a TypeBox object built from them holds", () => {
    const schema = Type.Object({
      resources: Type.Optional(resourcesSchema("R.")),
      conditions: conditionsSchema("C."),
      timeout: goDurationSchema("T.", "5s"),
      ...podPlacementProperties(),
    });
    expectTypeOf<Type.Static<typeof schema>>().toEqualTypeOf<{
      resources?: ResourceQuantities;
      conditions: Condition[];
      timeout: string;
      labels?: Record<string, string>;
      annotations?: Record<string, string>;
      affinity?: Record<string, unknown>;
      tolerations?: Toleration[];
      nodeSelector?: Record<string, string>;
    }>();
    expect(schema.required).toEqual(["conditions", "timeout"]);
  });

  it("Defaulted: the fields a schema defaults are present on what the API server returns", () => {
    const spec = Type.Object({
      replicas: Type.Optional(Type.Integer({ default: 1 })),
      name: Type.Optional(Type.String()),
    });
    expectTypeOf<Defaulted<Type.Static<typeof spec>, "replicas">>().toEqualTypeOf<{
      name?: string;
      replicas: number;
    }>();
  });
});

describe("storageSizeBytes", () => {
  it.each([
    ["1Gi", 2 ** 30],
    ["1.5Gi", 1.5 * 2 ** 30],
    ["500M", 5e8],
    ["1024Mi", 2 ** 30],
    ["8Gi", 8 * 2 ** 30],
    ["10", 10],
    ["1GB", undefined],
    ["-1Gi", undefined],
  ])("%s", (size, bytes) => expect(storageSizeBytes(size)).toBe(bytes));
});

describe("parseGoDuration", () => {
  it.each([
    ["2160h", 2160 * 3_600_000],
    ["1h30m", 90 * 60_000],
    ["10m", 600_000],
    ["1.5s", 1500],
  ])("%s", (text, ms) => expect(parseGoDuration(text)).toBe(ms));
  it.each(["", "10", "1d", "h", "1h 2m"])("refuses %j", (text) =>
    expect(() => parseGoDuration(text)).toThrow(),
  );
});
