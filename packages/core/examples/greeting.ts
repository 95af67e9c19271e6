// The Greeting controller of configmap-from-cr.ts, importable: its kind, its pure builder and its reconciler,
// so a unit test (greeting.test.ts) runs the reconciler with reconcileOnce from "@capstan/core/testing".
import {
  type Condition,
  ConfigMap,
  conditionsEqual,
  defineKind,
  type ErrorPolicy,
  handleFinalizer,
  type KubeObject,
  type ObjectOf,
  type Reconciler,
  setCondition,
  setControllerReference,
  TerminalError,
} from "@capstan/core";

export interface Greeting extends KubeObject {
  spec: { message: string; recipients?: string[] };
  status?: { observedGeneration?: number; conditions?: Condition[]; configMap?: string };
}

export const Greeting = defineKind<Greeting>({
  group: "examples.capstan.dev",
  version: "v1alpha1",
  kind: "Greeting",
  plural: "greetings",
  namespaced: true,
});

/** The field manager of the controller's applies (`controller({ fieldManager })`, then `ctx.apply`). */
export const FIELD_MANAGER = "greeting-controller";
export const FINALIZER = "examples.capstan.dev/goodbye";

/** Pure builder: the ConfigMap a Greeting wants. */
export function desiredConfigMap(g: Greeting): ObjectOf<typeof ConfigMap> {
  const cm: ObjectOf<typeof ConfigMap> = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: `${g.metadata.name}-greeting`,
      namespace: g.metadata.namespace ?? "default",
      labels: { "app.kubernetes.io/managed-by": "greeting-controller" },
    },
    data: Object.fromEntries((g.spec.recipients ?? ["world"]).map((r) => [r, `${g.spec.message}, ${r}!`])),
  };
  setControllerReference(g, Greeting, cm);
  return cm;
}

/** A spec only this controller can judge invalid: terminal (not retried) until the Greeting changes. */
export class InvalidSpec extends TerminalError {}

/**
 * The controller's error policy: an {@link InvalidSpec} is Degraded with a Warning naming the field. It stays a
 * terminal error (no requeueAfter), so it is not retried until the spec changes.
 */
export const greetingErrorPolicy: ErrorPolicy<Greeting> = (err) =>
  err instanceof InvalidSpec
    ? {
        conditions: [{ type: "Degraded", status: "True", reason: "InvalidSpec", message: err.message }],
        event: { reason: "InvalidSpec", action: "Validate" },
      }
    : undefined;

/** Keeps `<name>-greeting` in step with the Greeting, and reports it in status. Steady state writes nothing. */
export const reconcileGreeting: Reconciler = async (req, ctx) => {
  const g = await ctx.cache.get(Greeting, req.name, req.namespace);
  if (!g) return; // deleted; the ConfigMap goes with it (owner reference + garbage collector)
  const { deleted } = await handleFinalizer(ctx.client, Greeting, g, FINALIZER, async () => {
    ctx.log.info("greeting deleted; saying goodbye");
  });
  if (deleted) return;
  // Only the operator can judge this: greetingErrorPolicy makes it Degraded with an Event naming the field; no retry.
  if (g.spec.message.includes("\n")) throw new InvalidSpec("spec.message must be a single line");
  const live = await ctx.cache.get(ConfigMap, `${g.metadata.name}-greeting`, req.namespace);
  // Server-side apply as the controller's field manager; nothing is sent while live already matches.
  const { applied } = await ctx.apply(ConfigMap, desiredConfigMap(g), live);
  if (applied) {
    ctx.recorder.event(
      g,
      "Normal",
      "ConfigMapApplied",
      "Apply",
      `ConfigMap ${g.metadata.name}-greeting updated`,
    );
  }
  const observedGeneration = g.metadata.generation ?? 0;
  const available = setCondition(g.status?.conditions, {
    type: "Available",
    status: "True",
    reason: "ConfigMapReady",
    message: "the ConfigMap holds the greeting",
    observedGeneration,
  });
  const conditions = setCondition(available, {
    type: "Degraded",
    status: "False",
    reason: "AsExpected",
    message: "",
    observedGeneration,
  });
  // Steady state: nothing changed, so nothing is written.
  if (
    g.status?.observedGeneration !== g.metadata.generation ||
    !conditionsEqual(conditions, g.status?.conditions ?? [])
  ) {
    await ctx.client.patchStatus(Greeting, req.name, req.namespace, {
      status: {
        observedGeneration: g.metadata.generation,
        conditions,
        configMap: `${g.metadata.name}-greeting`,
      },
    });
  }
  return undefined;
};
