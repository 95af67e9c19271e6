// annotatePods against the test kit's fake API server: which pods it patches, that a second call writes nothing,
// and how it treats pods being deleted, pods gone meanwhile and other errors.
import { Registry } from "prom-client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Pod } from "../api/kinds.ts";
import type { KubeObject } from "../api/object.ts";
import { Client } from "../client/client.ts";
import { CoreMetrics } from "../metrics/metrics.ts";
import { FakeApiServer } from "../testing/fake-api-server.ts";
import { annotatePods } from "./pod-annotations.ts";

const A = "example.capstan.dev/config";
let server: FakeApiServer;
let client: Client;

beforeEach(async () => {
  server = new FakeApiServer();
  await server.start();
  client = new Client({ kubeConfig: server.kubeConfig(), metrics: new CoreMetrics(new Registry()) });
});
afterEach(async () => {
  await server.stop();
});

function pod(name: string, annotations?: Record<string, string>, deleting = false): KubeObject {
  return server.put(Pod, {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      namespace: "ns",
      ...(annotations === undefined ? {} : { annotations }),
      ...(deleting ? { deletionTimestamp: "2026-01-01T00:00:00Z", finalizers: ["x/y"] } : {}),
    },
  });
}
const annotationOf = (name: string) =>
  server.all().find((o) => o.kind === "Pod" && o.metadata.name === name)?.metadata.annotations?.[A];
const patchedNames = () =>
  server
    .writes()
    .filter((w) => w.verb === "patch")
    .map((w) => w.name);

describe("annotatePods", () => {
  it("patches the pods that lack the value, keeps their other annotations, and only those", async () => {
    const pods = [pod("a"), pod("b", { [A]: "old", other: "kept" }), pod("c", { [A]: "v2" })];
    expect(await annotatePods(client, pods, A, "v2", { fieldManager: "op" })).toBe(2);
    expect(patchedNames()).toEqual(["a", "b"]);
    expect(["a", "b", "c"].map(annotationOf)).toEqual(["v2", "v2", "v2"]);
    const b = server.all().find((o) => o.metadata.name === "b");
    expect(b?.metadata.annotations?.other).toBe("kept");
    expect(server.writes()[0]?.query.fieldManager).toBe("op");
  });

  it("writes nothing the second time (no steady-state write)", async () => {
    await annotatePods(client, [pod("a"), pod("b")], A, "v1");
    const live = server.all().filter((o) => o.kind === "Pod");
    server.clearLog();
    expect(await annotatePods(client, live, A, "v1")).toBe(0);
    expect(server.writes()).toEqual([]);
  });

  it("skips pods being deleted, and does nothing for an empty value", async () => {
    const pods = [pod("a", undefined, true), pod("b")];
    expect(await annotatePods(client, pods, A, "")).toBe(0);
    expect(await annotatePods(client, pods, A, "v1")).toBe(1);
    expect(patchedNames()).toEqual(["b"]);
  });

  it("goes on past a pod deleted meanwhile, and stops at any other error", async () => {
    const pods = [pod("a"), pod("b"), pod("c")];
    server.remove(Pod, "ns", "a");
    expect(await annotatePods(client, pods, A, "v1")).toBe(2);
    expect(["b", "c"].map(annotationOf)).toEqual(["v1", "v1"]);

    server.fail({ verb: "patch", name: "b" }, 403);
    await expect(annotatePods(client, pods.slice(1), A, "v2")).rejects.toThrow(/403|forbidden/i);
    expect(annotationOf("c")).toBe("v1");
  });
});
