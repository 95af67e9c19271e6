// Example: a controller that keeps a ConfigMap derived from a custom resource (Greeting).
// Run against any cluster in KUBECONFIG:  npm run example   (from the repository root)
// It installs its CRD, creates a sample Greeting in the "default" namespace (unless SAMPLE=false),
// then reconciles until SIGTERM/SIGINT. Edit the Greeting and watch the ConfigMap follow:
//   kubectl patch greeting hello --type merge -p '{"spec":{"message":"Hi again"}}'
//   kubectl get configmap hello-greeting -o yaml
import {
  applyIfChanged,
  Client,
  type Condition,
  ConfigMap,
  CustomResourceDefinition,
  conditionsEqual,
  controller,
  createLogger,
  defineKind,
  generationChanged,
  handleFinalizer,
  type KubeObject,
  Manager,
  type ObjectOf,
  setCondition,
  setControllerReference,
  shutdownSignal,
  TerminalError,
} from "@capstan/core";

interface Greeting extends KubeObject {
  spec: { message: string; recipients?: string[] };
  status?: { observedGeneration?: number; conditions?: Condition[]; configMap?: string };
}

const Greeting = defineKind<Greeting>({
  group: "examples.capstan.dev",
  version: "v1alpha1",
  kind: "Greeting",
  plural: "greetings",
  namespaced: true,
});

const FIELD_MANAGER = "greeting-controller";
const FINALIZER = "examples.capstan.dev/goodbye";

/** Pure builder: the ConfigMap a Greeting wants. */
function desiredConfigMap(g: Greeting): ObjectOf<typeof ConfigMap> {
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

const logger = createLogger({ name: "greeting-example" });
const client = new Client();

// Install the CRD (server-side apply: idempotent) and wait until it is established.
await client.apply(
  CustomResourceDefinition,
  {
    metadata: { name: "greetings.examples.capstan.dev" },
    spec: {
      group: "examples.capstan.dev",
      names: {
        kind: "Greeting",
        plural: "greetings",
        singular: "greeting",
        shortNames: ["greet"],
        categories: ["capstan"],
      },
      scope: "Namespaced",
      versions: [
        {
          name: "v1alpha1",
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: {
              type: "object",
              properties: {
                spec: {
                  type: "object",
                  required: ["message"],
                  properties: {
                    message: { type: "string", minLength: 1, maxLength: 200 },
                    recipients: {
                      type: "array",
                      maxItems: 20,
                      items: { type: "string", pattern: "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" },
                    },
                  },
                },
                status: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
              },
            },
          },
        },
      ],
    },
  },
  { fieldManager: FIELD_MANAGER, force: true },
);
for (let i = 0; ; i++) {
  const crd = await client.get(CustomResourceDefinition, "greetings.examples.capstan.dev");
  if (crd.status?.conditions?.some((c) => c.type === "Established" && c.status === "True")) break;
  if (i > 50) throw new Error("CRD greetings.examples.capstan.dev did not become Established");
  await new Promise((r) => setTimeout(r, 200));
}
if (process.env.SAMPLE !== "false") {
  await client.apply(
    Greeting,
    {
      metadata: { name: "hello", namespace: "default" },
      spec: { message: "Hello", recipients: ["world", "capstan"] },
    },
    { fieldManager: "greeting-sample" },
  );
}

const mgr = new Manager({
  name: "greeting-example",
  client,
  logger,
  metricsPort: Number(process.env.METRICS_PORT ?? 8080),
  healthPort: Number(process.env.HEALTH_PORT ?? 8081),
});

mgr.add(
  controller({
    name: "greeting",
    for: Greeting,
    owns: [ConfigMap],
    predicates: [generationChanged()],
    reconcile: async (req, ctx) => {
      const g = await ctx.cache.get(Greeting, req.name, req.namespace);
      if (!g) return; // deleted; the ConfigMap goes with it (owner reference + garbage collector)
      const { deleted } = await handleFinalizer(ctx.client, Greeting, g, FINALIZER, async () => {
        ctx.log.info("greeting deleted; saying goodbye");
      });
      if (deleted) return;
      if (g.spec.message.includes("\n")) {
        // Only the operator can judge this: Degraded condition + Event naming the field; no retry.
        ctx.recorder.event(g, "Warning", "InvalidSpec", "Validate", "spec.message must be a single line");
        throw new TerminalError("spec.message must be a single line");
      }
      const live = await ctx.cache.get(ConfigMap, `${g.metadata.name}-greeting`, req.namespace);
      const { applied } = await applyIfChanged(ctx.client, ConfigMap, desiredConfigMap(g), live, {
        fieldManager: FIELD_MANAGER,
        force: true,
      });
      if (applied)
        ctx.recorder.event(
          g,
          "Normal",
          "ConfigMapApplied",
          "Apply",
          `ConfigMap ${g.metadata.name}-greeting updated`,
        );
      const conditions = setCondition(g.status?.conditions, {
        type: "Available",
        status: "True",
        reason: "ConfigMapReady",
        message: "the ConfigMap holds the greeting",
        observedGeneration: g.metadata.generation ?? 0,
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
    },
  }),
);

await mgr.start(shutdownSignal()).catch((err: Error) => {
  logger.error({ err }, "manager failed");
  process.exit(1);
});
