// Unit test of the Greeting reconciler with the test kit: no cluster, no Manager, one reconcile at a time.
import { ConfigMap, findCondition, isConditionTrue } from "@capstan/core";
import { reconcileOnce } from "@capstan/core/testing";
import { describe, expect, it } from "vitest";
import { FINALIZER, Greeting, greetingErrorPolicy, reconcileGreeting } from "./greeting.ts";

const hello: Greeting = {
  apiVersion: "examples.capstan.dev/v1alpha1",
  kind: "Greeting",
  metadata: { name: "hello", namespace: "default", uid: "uid-hello", generation: 1 },
  spec: { message: "Hello", recipients: ["world", "capstan"] },
};

describe("reconcileGreeting", () => {
  it("creates the ConfigMap and reports it in status, then makes no writes once in step", async () => {
    const first = await reconcileOnce(reconcileGreeting, {
      kinds: [Greeting],
      objects: [hello],
      request: hello,
    });
    first.expectNoError();
    expect(first.writes.map((w) => `${w.verb} ${w.kind} ${w.subresource}`.trim())).toEqual([
      "patch Greeting", // the finalizer
      "apply ConfigMap",
      "patch Greeting status",
    ]);
    const cm = first.get(ConfigMap, "hello-greeting", "default");
    expect(cm?.data).toEqual({ world: "Hello, world!", capstan: "Hello, capstan!" });
    expect(cm?.metadata.ownerReferences?.[0]).toMatchObject({
      kind: "Greeting",
      name: "hello",
      controller: true,
    });
    const g = first.get(Greeting, "hello", "default");
    expect(g?.metadata.finalizers).toEqual([FINALIZER]);
    expect(g?.status?.observedGeneration).toBe(1);
    expect(isConditionTrue(g?.status?.conditions, "Available")).toBe(true);
    expect(first.events.map((e) => e.reason)).toEqual(["ConfigMapApplied"]);

    // Steady state: reconciling the objects the first run left behind writes nothing.
    const second = await reconcileOnce(reconcileGreeting, {
      kinds: [Greeting],
      objects: first.objects,
      request: hello,
    });
    second.expectNoError();
    second.expectNoWrites();
    expect(second.events).toEqual([]);
  });

  it("re-applies the ConfigMap when the message changes", async () => {
    const first = await reconcileOnce(reconcileGreeting, {
      kinds: [Greeting],
      objects: [hello],
      request: hello,
    });
    const edited = first.objects.map((o) =>
      o.kind === "Greeting"
        ? { ...o, spec: { message: "Hi" }, metadata: { ...o.metadata, generation: 2 } }
        : o,
    );
    const second = await reconcileOnce(reconcileGreeting, {
      kinds: [Greeting],
      objects: edited,
      request: hello,
    });
    second.expectNoError();
    expect(second.writesOf(ConfigMap)).toMatchObject([
      { verb: "apply", body: { data: { world: "Hi, world!" } } },
    ]);
    expect(second.writesOf(Greeting, "status")).toMatchObject([
      { body: { status: { observedGeneration: 2 } } },
    ]);
  });

  it("refuses a multi-line message: Degraded naming the field, a Warning, a terminal error (no retry)", async () => {
    const bad = {
      ...hello,
      metadata: { ...hello.metadata, finalizers: [FINALIZER] },
      spec: { message: "a\nb" },
    };
    const run = await reconcileOnce(reconcileGreeting, {
      kinds: [Greeting],
      objects: [bad],
      request: bad,
      errorPolicy: greetingErrorPolicy, // as the controller in configmap-from-cr.ts applies it
    });
    expect((run.error as Error).name).toBe("TerminalError");
    expect(run.events).toMatchObject([
      { type: "Warning", reason: "InvalidSpec", note: "spec.message must be a single line" },
    ]);
    expect(run.writes.map((w) => `${w.verb} ${w.kind} ${w.subresource}`)).toEqual(["patch Greeting status"]);
    expect(
      findCondition(run.get(Greeting, "hello", "default")?.status?.conditions, "Degraded"),
    ).toMatchObject({
      status: "True",
      reason: "InvalidSpec",
      message: "spec.message must be a single line",
    });

    // Fixed: Available, and Degraded back to False.
    const fixed = { ...bad, spec: { message: "Hello" } };
    const again = await reconcileOnce(reconcileGreeting, {
      kinds: [Greeting],
      objects: run.objects.map((o) => (o.kind === "Greeting" ? { ...o, spec: fixed.spec } : o)),
      request: fixed,
      errorPolicy: greetingErrorPolicy,
    });
    again.expectNoError();
    const conditions = again.get(Greeting, "hello", "default")?.status?.conditions;
    expect(isConditionTrue(conditions, "Available")).toBe(true);
    expect(findCondition(conditions, "Degraded")).toMatchObject({ status: "False", reason: "AsExpected" });
  });

  it("does nothing for a Greeting that is gone", async () => {
    const run = await reconcileOnce(reconcileGreeting, { request: { namespace: "default", name: "hello" } });
    run.expectNoError();
    expect(run.requests.map((r) => r.verb)).toEqual([]);
  });
});
