// The builder's output for a sample __Kind__ is the golden file testdata/config-map.golden.json
// (UPDATE_GOLDEN=1 npx vitest run rewrites it; review the diff).
import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { sample } from "../api/sample.ts";
import { desiredConfigMap } from "./config-map.ts";

const golden = new URL("../../testdata/config-map.golden.json", import.meta.url);

describe("desiredConfigMap", () => {
  it("is the golden ConfigMap: spec.data, the managed-by label, owned by the __Kind__", () => {
    const text = `${JSON.stringify(desiredConfigMap(sample), null, 2)}\n`;
    if (process.env.UPDATE_GOLDEN === "1") writeFileSync(golden, text);
    expect(text).toBe(readFileSync(golden, "utf8"));
  });

  it("copies spec.data, so changing the ConfigMap never changes the __Kind__", () => {
    const cm = desiredConfigMap(sample);
    cm.data!.greeting = "changed";
    expect(sample.spec.data.greeting).toBe("hello");
  });
});
