// ObjectMetrics: per-object series labelled object_namespace/object_name first, and forget() removing all of an
// object's series in every metric the kit made, whatever their own labels.
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { ObjectMetrics } from "./object-metrics.ts";

describe("ObjectMetrics", () => {
  it("labels each series object_namespace, object_name, then the metric's own labels in their declared order", async () => {
    const registry = new Registry();
    const objects = new ObjectMetrics(registry);
    const certs = objects.gauge({ name: "t_certs", help: "Certificates.", labelNames: ["secret", "key"] });
    const ready = objects.gauge({ name: "t_ready", help: "Ready." });
    const steps = objects.counter({ name: "t_steps_total", help: "Steps.", labelNames: ["step"] });
    // Own labels given in another order are exposed in the declared one.
    certs.set({ namespace: "apps", name: "a" }, { key: "tls.crt", secret: "s" }, 7);
    ready.set({ namespace: "apps", name: "a" }, 1);
    ready.set({ name: "cluster-scoped" }, 0);
    steps.inc({ namespace: "apps", name: "a" }, { step: "Add" });
    steps.inc({ namespace: "apps", name: "a" }, { step: "Add" }, 2);
    steps.inc({ namespace: "apps", name: "b" }, { step: "Remove" }, 0);
    const text = await registry.metrics();
    expect(text).toContain('t_certs{object_namespace="apps",object_name="a",secret="s",key="tls.crt"} 7');
    expect(text).toContain('t_ready{object_namespace="apps",object_name="a"} 1');
    expect(text).toContain('t_ready{object_namespace="",object_name="cluster-scoped"} 0');
    expect(text).toContain('t_steps_total{object_namespace="apps",object_name="a",step="Add"} 3');
    expect(text).toContain('t_steps_total{object_namespace="apps",object_name="b",step="Remove"} 0');
    expect((await ready.get()).values).toHaveLength(2);
  });

  it("forget removes every series of the object in every metric it made, and only that object's", async () => {
    const registry = new Registry();
    const objects = new ObjectMetrics(registry);
    const pods = objects.gauge({ name: "t_pods", help: "Pods.", labelNames: ["state"] });
    const peers = objects.gauge({ name: "t_peers", help: "Peers." });
    const steps = objects.counter({ name: "t_steps_total", help: "Steps.", labelNames: ["step"] });
    for (const name of ["gone", "kept"]) {
      for (const state of ["active", "sealed"]) pods.set({ namespace: "apps", name }, { state }, 1);
      peers.set({ namespace: "apps", name }, 3);
      for (const step of ["Init", "Join", "Upgrade"]) steps.inc({ namespace: "apps", name }, { step });
    }
    // Another object kind with the same namespace/name lives in another ObjectMetrics and is left alone.
    const other = new ObjectMetrics(registry).gauge({ name: "t_other", help: "Other kind." });
    other.set({ namespace: "apps", name: "gone" }, 1);

    objects.forget({ namespace: "apps", name: "gone" });
    const text = await registry.metrics();
    expect(text.replace('t_other{object_namespace="apps",object_name="gone"} 1', "")).not.toContain(
      'object_name="gone"',
    );
    expect(text).toContain('t_pods{object_namespace="apps",object_name="kept",state="sealed"} 1');
    expect(text).toContain('t_peers{object_namespace="apps",object_name="kept"} 3');
    expect(text).toContain('t_steps_total{object_namespace="apps",object_name="kept",step="Upgrade"} 1');
    expect(text).toContain('t_other{object_namespace="apps",object_name="gone"} 1');

    // An object of the same name created again starts from nothing.
    steps.inc({ namespace: "apps", name: "gone" }, { step: "Init" });
    expect(await registry.getSingleMetricAsString("t_steps_total")).toContain(
      't_steps_total{object_namespace="apps",object_name="gone",step="Init"} 1',
    );
  });

  it("remove drops one series, and forget does not bring it back", async () => {
    const registry = new Registry();
    const objects = new ObjectMetrics(registry);
    const tolerance = objects.gauge({ name: "t_tolerance", help: "Tolerance." });
    const pods = objects.gauge({ name: "t_pods", help: "Pods.", labelNames: ["state"] });
    tolerance.set({ namespace: "apps", name: "a" }, 1);
    pods.set({ namespace: "apps", name: "a" }, { state: "active" }, 1);
    pods.set({ namespace: "apps", name: "a" }, { state: "sealed" }, 2);
    tolerance.remove({ namespace: "apps", name: "a" });
    pods.remove({ namespace: "apps", name: "a" }, { state: "sealed" });
    pods.remove({ namespace: "apps", name: "never" }, { state: "sealed" }); // no error
    const text = await registry.metrics();
    expect(text).not.toContain("t_tolerance{");
    expect(text).toContain('t_pods{object_namespace="apps",object_name="a",state="active"} 1');
    expect(text).not.toContain('state="sealed"');
    objects.forget({ namespace: "apps", name: "a" });
    expect(await registry.metrics()).not.toContain("object_name=");
  });

  it("replace sets exactly the given series of an object and removes its others", async () => {
    const registry = new Registry();
    const objects = new ObjectMetrics(registry);
    const expiry = objects.gauge({ name: "t_expiry", help: "Expiry.", labelNames: ["secret"] });
    const a = { namespace: "apps", name: "a" };
    expiry.replace(a, [
      { labels: { secret: "old" }, value: 1 },
      { labels: { secret: "ca" }, value: 2 },
    ]);
    expiry.set({ namespace: "apps", name: "b" }, { secret: "old" }, 9);
    expiry.replace(a, [
      { labels: { secret: "ca" }, value: 3 },
      { labels: { secret: "new" }, value: 4 },
    ]);
    let text = await registry.getSingleMetricAsString("t_expiry");
    expect(text).not.toContain('object_name="a",secret="old"');
    expect(text).toContain('t_expiry{object_namespace="apps",object_name="a",secret="ca"} 3');
    expect(text).toContain('t_expiry{object_namespace="apps",object_name="a",secret="new"} 4');
    expect(text).toContain('t_expiry{object_namespace="apps",object_name="b",secret="old"} 9');
    expiry.replace(a, []);
    text = await registry.getSingleMetricAsString("t_expiry");
    expect(text).not.toContain('object_name="a"');
    // forget after replace leaves nothing of a behind, and b untouched.
    objects.forget(a);
    expect(await registry.getSingleMetricAsString("t_expiry")).toContain('object_name="b"');
  });

  it("checks the own labels at compile time", () => {
    const objects = new ObjectMetrics(new Registry());
    const pods = objects.gauge({ name: "t_pods", help: "Pods.", labelNames: ["state"] });
    const peers = objects.gauge({ name: "t_peers", help: "Peers." });
    // Never called: `npm run typecheck` checks these lines (an unused @ts-expect-error is an error too).
    const misuses = () => {
      // @ts-expect-error: a label the gauge does not declare
      pods.set({ name: "a" }, { phase: "x" }, 1);
      // @ts-expect-error: the gauge's own label is required
      pods.set({ name: "a" }, 1);
      // @ts-expect-error: a gauge without own labels takes none
      peers.set({ name: "a" }, { state: "x" }, 1);
    };
    expect(misuses).toBeTypeOf("function");
    peers.set({ name: "a" }, 1);
    pods.set({ name: "a" }, { state: "active" }, 1);
  });
});
