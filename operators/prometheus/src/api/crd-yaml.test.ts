// The generated CRD files (crds/*.yaml) are what `capstan crd` writes from the schemas, and the committed YAML
// parses back to the CRD objects.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { crdDrift, formatDrift } from "@capstan/cli";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { crds } from "./crds.ts";

const packageDir = fileURLToPath(new URL("../../", import.meta.url));

describe("generated CRD files", () => {
  it("are current (npm run gen:crd rewrites them)", async () => {
    const drift = await crdDrift(packageDir);
    expect(drift.map((d) => formatDrift(d, packageDir))).toEqual([]);
  });

  it("declare the four CRDs, and crds/ parses back to them", () => {
    expect(crds.map((c) => c.metadata.name)).toEqual([
      "prometheuses.monitoring.capstan.dev",
      "servicemonitors.monitoring.coreos.com",
      "podmonitors.monitoring.coreos.com",
      "prometheusrules.monitoring.coreos.com",
    ]);
    for (const crd of crds) {
      const committed = readFileSync(
        new URL(`../../crds/${crd.metadata.name}.yaml`, import.meta.url),
        "utf8",
      );
      expect(parse(committed)).toEqual(crd);
    }
  });
});
