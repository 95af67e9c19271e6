// The chart's RBAC is exactly what this operator's code needs (what `capstan rbac --check` checks): what rbac.ts
// declares plus what the controller watches, Events, the Lease and the metrics reviews, in every rendering the check
// compares (cluster-wide, namespaced, without leader election and secure metrics).
import { fileURLToPath } from "node:url";
import { rbacDrift } from "@capstan/cli";
import { findHelm } from "@capstan/cli/chart";
import { describe, expect, it } from "vitest";

const packageDir = fileURLToPath(new URL("../../", import.meta.url));
const helm = findHelm();

describe.skipIf(helm === undefined)("the chart's RBAC", () => {
  it("grants what the operator needs and nothing more, in every mode", async () => {
    expect(await rbacDrift(packageDir, helm!)).toEqual([]);
  });
});
