// The reconciler against core's in-memory API server (reconcileOnce): what the first reconcile writes, that the
// steady state writes nothing, drift is repaired, and a foreign ConfigMap is reported, never taken over.
import { ConfigMap, type KubeObject } from "@capstan/core";
import { reconcileOnce } from "@capstan/testing";
import { describe, expect, it } from "vitest";
import { __Kind__Kind } from "../api/__kind__.ts";
import { sample } from "../api/sample.ts";
import { __kind__Controller, reconcile__Kind__ } from "./controller.ts";

const run = (objects: KubeObject[]) =>
  reconcileOnce(reconcile__Kind__, { kinds: [__Kind__Kind], objects, request: sample });

describe("__kind__Controller", () => {
  it("applies as capstan-__name__-operator (the name in managedFields: never rename it)", () => {
    expect(__kind__Controller().fieldManager).toBe("capstan-__name__-operator");
  });
});

describe("reconcile__Kind__", () => {
  it("creates the ConfigMap and reports it; then the steady state writes nothing", async () => {
    const first = await run([sample]);
    first.expectNoError();
    expect(first.writes.map((w) => `${w.verb} ${w.kind} ${w.subresource}`.trim())).toEqual([
      "apply ConfigMap",
      "patch __Kind__ status",
    ]);
    expect(first.get(ConfigMap, "demo-__kind__", "default")?.data).toEqual(sample.spec.data);
    const status = first.get(__Kind__Kind, "demo", "default")?.status;
    expect(status?.configMap).toBe("demo-__kind__");
    expect(status?.conditions?.find((c) => c.type === "Available")?.status).toBe("True");
    // Progressing and Degraded come from core's stepConditions: an applied ConfigMap is in sync.
    expect(status?.conditions?.find((c) => c.type === "Progressing")).toMatchObject({
      status: "False",
      reason: "InSync",
    });
    expect(first.events.map((e) => e.reason)).toEqual(["ConfigMapMissing"]);

    const second = await run(first.objects);
    second.expectNoWrites();
  });

  it("puts back a value someone edited", async () => {
    const first = await run([sample]);
    const edited = first.objects.map((o) =>
      o.kind === "ConfigMap" ? ({ ...o, data: { greeting: "edited", target: "world" } } as KubeObject) : o,
    );
    const again = await run(edited);
    again.expectNoError();
    expect(again.get(ConfigMap, "demo-__kind__", "default")?.data).toEqual(sample.spec.data);
    expect(again.events.map((e) => e.reason)).toEqual(["ConfigMapDrifted"]);
  });

  it("reports a ConfigMap it does not own as Degraded and leaves it alone", async () => {
    const foreign: KubeObject = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: "demo-__kind__",
        namespace: "default",
        labels: { "app.kubernetes.io/managed-by": "capstan-__name__-operator" },
      },
    };
    const r = await run([sample, foreign]);
    r.expectNoError();
    expect(r.writesOf(ConfigMap)).toEqual([]);
    const degraded = r
      .get(__Kind__Kind, "demo", "default")
      ?.status?.conditions?.find((c) => c.type === "Degraded");
    expect(degraded).toMatchObject({ status: "True", reason: "ConfigMapNotOwned" });
    expect(r.events.map((e) => e.reason)).toEqual(["ConfigMapNotOwned"]);
  });
});
