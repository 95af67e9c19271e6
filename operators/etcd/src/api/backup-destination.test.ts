// Where a backup goes: the S3 and PVC types name the schema's properties, and the exactly-one rule holds on
// sample values (the real CEL runs against an API server).
import { describe, expect, it } from "vitest";
import { destinationSchema, type PVCDestination, type S3Destination } from "./backup-destination.ts";

const s3Keys: Record<keyof S3Destination, true> = {
  endpoint: true,
  bucket: true,
  prefix: true,
  region: true,
  forcePathStyle: true,
  credentialsSecret: true,
  caSecret: true,
};
const pvcKeys: Record<keyof PVCDestination, true> = { claimName: true, directory: true };

type Schema = {
  properties?: Record<string, Schema>;
  "x-kubernetes-validations"?: { rule: string; message: string }[];
  [key: string]: unknown;
};
const destination = destinationSchema as unknown as Schema;
const propertyNames = (s: Schema | undefined) => Object.keys(s?.properties ?? {}).sort();

describe("destination types match the schema", () => {
  it.each([
    ["destination.s3", s3Keys, destination.properties!.s3],
    ["destination.pvc", pvcKeys, destination.properties!.pvc],
  ] as const)("%s", (_path, keys, schema) => {
    expect(propertyNames(schema)).toEqual(Object.keys(keys).sort());
  });
});

// JavaScript equivalents of the CEL rules, checked on sample values.
describe("destination rule", () => {
  const rule = destination["x-kubernetes-validations"]![0]!;
  const holds = (d: Record<string, unknown>) => "s3" in d !== "pvc" in d;
  it("is the exactly-one rule", () => expect(rule.rule).toBe("has(self.s3) != has(self.pvc)"));
  it.each([
    [{ s3: {} }, true],
    [{ pvc: {} }, true],
    [{}, false],
    [{ s3: {}, pvc: {} }, false],
  ])("%j -> %s", (d, ok) => expect(holds(d)).toBe(ok));
  it("names both fields in its message", () => expect(rule.message).toMatch(/exactly one of s3 or pvc/));
});
