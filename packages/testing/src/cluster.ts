// Connecting tests to a real cluster (KUBECONFIG), a namespace per test, and CRDs that are Established.

import { findHelm } from "@capstan/cli/helm";
import {
  Client,
  CoreMetrics,
  CustomResourceDefinition,
  isNotFound,
  type KubeObject,
  Namespace,
  type ObjectOf,
} from "@capstan/core";
import { KubeConfig } from "@kubernetes/client-node";
import { Registry } from "prom-client";
import { eventually } from "./eventually.ts";

/**
 * Whether the operator suites can run: containers that really run (CAPSTAN_REAL_NODE=1, the local cluster's real
 * node, set by e2e/run.sh) and a Helm binary to install the charts (@capstan/cli/helm's findHelm: CAPSTAN_HELM, else
 * the local cluster's cached build, else PATH).
 */
export const realNodeSuitesEnabled =
  ["1", "true"].includes(process.env.CAPSTAN_REAL_NODE ?? "") && findHelm() !== undefined;

/** The real node the operator suites pin their pods to (a kwok fake node may be schedulable too). */
export const testNodeName = process.env.CAPSTAN_NODE_NAME ?? "capstan-node-0";

/** True when the pod's Ready condition is True. */
export function podReady(pod: { status?: { conditions?: { type: string; status: string }[] } }): boolean {
  return pod.status?.conditions?.find((c) => c.type === "Ready")?.status === "True";
}

export interface TestCluster {
  client: Client;
  kubeConfig: KubeConfig;
  /** The client's own metrics (rest_client_* counts every request it made). */
  metrics: CoreMetrics;
}

/** A client for the cluster in KUBECONFIG (or the kubeconfig file at `path`); fails with a clear message when none is configured. */
export function connect(path = process.env.KUBECONFIG): TestCluster {
  if (!path) {
    throw new Error(
      "KUBECONFIG is not set: start a cluster with `npm run cluster:up` and export the path it prints",
    );
  }
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(path);
  const metrics = new CoreMetrics(new Registry());
  return { client: new Client({ kubeConfig, metrics, userAgent: "capstan-tests" }), kubeConfig, metrics };
}

export interface TestNamespace {
  name: string;
  /** Deletes the namespace (and so everything in it) and waits until it is gone. */
  cleanup(): Promise<void>;
}

/** Creates a namespace with a unique name (`prefix-xxxxx`), labelled so leftovers are easy to find. */
export async function createNamespace(
  client: Client,
  prefix = "test",
  labels: Record<string, string> = {},
): Promise<TestNamespace> {
  const name = `${prefix}-${Math.random().toString(36).slice(2, 7)}`;
  await client.create(Namespace, {
    metadata: { name, labels: { "capstan.dev/test": "true", ...labels } },
  } as ObjectOf<typeof Namespace>);
  return {
    name,
    cleanup: async () => {
      await client.delete(Namespace, name).catch((err) => {
        if (!isNotFound(err)) throw err;
      });
    },
  };
}

/** Server-side applies a CRD and waits until it is Established (its API is served). */
export async function applyCrd(
  client: Client,
  crd: ObjectOf<typeof CustomResourceDefinition>,
  fieldManager = "capstan-tests",
) {
  await client.apply(CustomResourceDefinition, crd, { fieldManager, force: true });
  const name = crd.metadata.name ?? "";
  return eventually(
    async () => {
      const live = await client.get(CustomResourceDefinition, name);
      const established = live.status?.conditions?.find((c) => c.type === "Established");
      if (established?.status !== "True") throw new Error(`CRD ${name} is not Established yet`);
      return live;
    },
    { timeoutMs: 30_000, message: `CRD ${name} becomes Established` },
  );
}

/** Deletes a cluster-scoped or namespaced object and waits until the API server no longer has it. */
export async function deleteAndWait(
  client: Client,
  kind: Parameters<Client["delete"]>[0],
  obj: KubeObject,
  timeoutMs = 30_000,
): Promise<void> {
  const { name = "", namespace } = obj.metadata;
  await client.delete(kind, name, namespace).catch((err) => {
    if (!isNotFound(err)) throw err;
  });
  await eventually(
    async () => {
      try {
        await client.get(kind, name, namespace);
        return false;
      } catch (err) {
        if (isNotFound(err)) return true;
        throw err;
      }
    },
    { timeoutMs, message: `${kind.kind} ${name} is deleted` },
  );
}
