// @capstan/testing re-exports the core test kit beside its real-cluster helpers: one import for both.
import { ConfigMap } from "@capstan/core";
import { describe, expect, it } from "vitest";
import { connect, eventually, FakeApiServer, podReady, reconcileOnce } from "./index.ts";

describe("@capstan/testing", () => {
  it("offers the fake API server and reconcileOnce beside the real-cluster helpers", async () => {
    expect(typeof connect).toBe("function");
    expect(typeof eventually).toBe("function");
    const run = await reconcileOnce(
      async (req, ctx) => {
        await ctx.client.create(ConfigMap, { metadata: { name: req.name, namespace: req.namespace } });
        return undefined;
      },
      { request: { namespace: "ns", name: "made" } },
    );
    expect(run.writes.map((w) => `${w.verb} ${w.kind} ${w.namespace}/${w.name}`)).toEqual([
      "create ConfigMap ns/made",
    ]);
    const server = await new FakeApiServer({ objects: run.objects }).start();
    try {
      expect(server.get(ConfigMap, "made", "ns")).toBeDefined();
    } finally {
      await server.stop();
    }
  });
});

describe("podReady", () => {
  it("is true only when the Ready condition is True", () => {
    const pod = (conditions?: { type: string; status: string }[]) => ({
      status: { ...(conditions ? { conditions } : {}) },
    });
    expect(podReady(pod([{ type: "Ready", status: "True" }]))).toBe(true);
    expect(
      podReady(
        pod([
          { type: "Ready", status: "False" },
          { type: "PodScheduled", status: "True" },
        ]),
      ),
    ).toBe(false);
    expect(podReady(pod([{ type: "PodScheduled", status: "True" }]))).toBe(false);
    expect(podReady(pod())).toBe(false);
    expect(podReady({})).toBe(false);
  });
});
