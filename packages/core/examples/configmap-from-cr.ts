// Example: a controller that keeps a ConfigMap derived from a custom resource (Greeting).
// Run against any cluster in KUBECONFIG:  npm run example   (from the repository root)
// It installs its CRD, creates a sample Greeting in the "default" namespace (unless SAMPLE=false),
// then reconciles until SIGTERM/SIGINT. The reconciler lives in greeting.ts, unit-tested in greeting.test.ts.
// Edit the Greeting and watch the ConfigMap follow:
//   kubectl patch greeting hello --type merge -p '{"spec":{"message":"Hi again"}}'
//   kubectl get configmap hello-greeting -o yaml
import {
  Client,
  ConfigMap,
  CustomResourceDefinition,
  controller,
  createLogger,
  generationChanged,
  Manager,
  operatorCommandLine,
  shutdownSignal,
} from "@capstan/core";
import { FIELD_MANAGER, Greeting, greetingErrorPolicy, reconcileGreeting } from "./greeting.ts";

// The operator command line every Capstan operator takes (--help lists it): ports, leader election, namespace.
const cli = operatorCommandLine({ name: "greeting-example" });
const logger = createLogger({ name: "greeting-example", level: cli.logLevel });
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

const mgr = new Manager({ ...cli.manager, client, logger });

mgr.add(
  controller({
    name: "greeting",
    for: Greeting,
    owns: [ConfigMap],
    predicates: [generationChanged()],
    reconcile: reconcileGreeting, // in greeting.ts, unit-tested in greeting.test.ts
    fieldManager: FIELD_MANAGER, // what ctx.apply records in managedFields
    errorPolicy: greetingErrorPolicy, // an invalid spec: Degraded and a Warning naming the field
  }),
);

await mgr.start(shutdownSignal()).catch((err: Error) => {
  logger.error({ err }, "manager failed");
  process.exit(1);
});
