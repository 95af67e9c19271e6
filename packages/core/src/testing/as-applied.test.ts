// asApplied is what applyIfChanged sends: a planner test's "in sync" object needs no apply, a drifted one does.
import { describe, expect, it } from "vitest";
import { ConfigMap, type ObjectOf } from "../api/kinds.ts";
import { applyIfChanged, needsApply } from "../client/apply.ts";
import { asApplied } from "./as-applied.ts";
import { FakeApiServer } from "./fake-api-server.ts";

const desired: ObjectOf<typeof ConfigMap> = {
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "cm", namespace: "ns", labels: { app: "x" } },
  data: { greeting: "hello" },
};

describe("asApplied", () => {
  it("needs no apply; a drifted copy of it does", () => {
    expect(needsApply(desired, asApplied(desired))).toBe(false);
    const drifted: ObjectOf<typeof ConfigMap> = { ...asApplied(desired), data: { greeting: "edited" } };
    expect(needsApply(desired, drifted)).toBe(true);
    expect(desired.metadata.annotations).toBeUndefined(); // not modified
  });

  it("is the object applyIfChanged sends", async () => {
    const server = await new FakeApiServer().start();
    const client = server.client();
    try {
      await applyIfChanged(client, ConfigMap, desired, undefined, { fieldManager: "test" });
      expect(server.writes().map((w) => w.body)).toEqual([asApplied(desired)]);
    } finally {
      await client.close();
      await server.stop();
    }
  });
});
