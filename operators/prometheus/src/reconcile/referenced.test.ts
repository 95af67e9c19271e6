// The Secrets monitors reference, read once per change: real reconciles against core's in-memory API server (one
// server kept across reconciles, so resourceVersions move as on a real one). A steady reconcile reads no Secret; a
// changed Secret is read again and its new value reaches the configuration; the Secret's watch (metadata only)
// reconciles the servers that use it and no other; what no server uses is forgotten.
import { type KubeObject, Secret, type SecretObject, type Watch } from "@capstan/core";
import { FakeApiServer, type ReconcileRun, reconcileOnce } from "@capstan/core/testing";
import { afterEach, describe, expect, it } from "vitest";
import { type Prometheus, PrometheusKind } from "../api/prometheus.ts";
import { type ServiceMonitor, ServiceMonitorKind } from "../api/service-monitor.ts";
import { defaultSpec } from "../desired/config-fixtures.ts";
import { referencedWatches } from "./controller.ts";
import { ControllerState } from "./options.ts";
import { KINDS, MONITORING_NAMESPACE, quietReconciler } from "./test-fixture.ts";

const server = (name: string): Prometheus => ({
  apiVersion: PrometheusKind.apiVersion,
  kind: PrometheusKind.kind,
  metadata: { name, namespace: "monitoring", uid: `p-${name}`, generation: 1 },
  spec: { ...defaultSpec, serviceMonitorSelector: { matchLabels: { server: name } } },
});

/** Server a's monitor, with basic auth from Secret creds. */
const monitor: ServiceMonitor = {
  apiVersion: ServiceMonitorKind.apiVersion,
  kind: ServiceMonitorKind.kind,
  metadata: { name: "api", namespace: "monitoring", uid: "sm-api", generation: 1, labels: { server: "a" } },
  spec: {
    selector: { matchLabels: { app: "api" } },
    endpoints: [
      {
        port: "metrics",
        basicAuth: { username: { name: "creds", key: "user" }, password: { name: "creds", key: "pass" } },
      },
    ],
  },
};

const creds = (pass: string): SecretObject => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name: "creds", namespace: "monitoring" },
  stringData: { user: "scraper", pass },
});

let api: FakeApiServer | undefined;
afterEach(async () => {
  await api?.stop();
  api = undefined;
});

async function started(objects: readonly KubeObject[]): Promise<FakeApiServer> {
  api = await new FakeApiServer().start();
  api.register(...KINDS);
  api.seed(...objects);
  return api;
}

async function reconcile(state: ControllerState, name: string): Promise<ReconcileRun> {
  const run = await reconcileOnce(quietReconciler(state), {
    server: api as FakeApiServer,
    request: { namespace: "monitoring", name },
  });
  run.expectNoError();
  return run;
}

const secretGets = (run: ReconcileRun) =>
  run.requests.filter((r) => r.verb === "get" && r.kind === "Secret" && r.name === "creds").length;

/** The password the server's configuration carries (its assets, base64 in the config Secret). */
function password(run: ReconcileRun): string | undefined {
  const config = run.get(Secret, "prometheus-a", "monitoring");
  const entry = Object.entries(config?.data ?? {}).find(([k]) => k.includes("creds") && k.includes("pass"));
  return entry === undefined ? undefined : Buffer.from(entry[1], "base64").toString();
}

function enqueued(w: Watch, obj: KubeObject): string[] {
  return [...new Set(w.map(obj).map((r) => r.name))].sort();
}

describe("the Secrets monitors reference", () => {
  it("are read once, not again while unchanged, and again once changed (the new value reaches the config)", async () => {
    await started([MONITORING_NAMESPACE, server("a"), monitor, creds("one")]);
    const state = new ControllerState();
    const first = await reconcile(state, "a");
    expect(secretGets(first)).toBe(1);
    expect(password(first)).toBe("one");

    const steady = await reconcile(state, "a");
    expect(secretGets(steady)).toBe(0);
    steady.expectNoWrites();

    const client = (api as FakeApiServer).client();
    const current = await client.get(Secret, "creds", "monitoring");
    await client.update(Secret, {
      ...current,
      data: { ...current.data, pass: Buffer.from("two").toString("base64") },
    });
    const changed = await reconcile(state, "a");
    expect(secretGets(changed)).toBe(1);
    expect(password(changed)).toBe("two");
    expect(state.referenced.reads).toBe(2);
  });

  it("a change of one reconciles the servers that use it, and none once they are gone", async () => {
    await started([MONITORING_NAMESPACE, server("a"), server("b"), monitor, creds("one")]);
    const state = new ControllerState();
    await reconcile(state, "a");
    await reconcile(state, "b");
    const [secrets] = referencedWatches(state);
    const meta = { apiVersion: "v1", kind: "Secret", metadata: { name: "creds", namespace: "monitoring" } };
    expect(enqueued(secrets as Watch, meta)).toEqual(["a"]);
    expect(enqueued(secrets as Watch, { ...meta, metadata: { ...meta.metadata, name: "other" } })).toEqual(
      [],
    );

    await (api as FakeApiServer).client().delete(PrometheusKind, "a", "monitoring");
    await reconcile(state, "a");
    expect(enqueued(secrets as Watch, meta)).toEqual([]);
  });

  it("a Secret that does not exist is missing (its monitor left out), and read once it appears", async () => {
    await started([MONITORING_NAMESPACE, server("a"), monitor]);
    const state = new ControllerState();
    const before = await reconcile(state, "a");
    expect(secretGets(before)).toBe(0); // its metadata says it does not exist: nothing to read
    expect(password(before)).toBeUndefined();
    await (api as FakeApiServer).client().create(Secret, creds("late"));
    const after = await reconcile(state, "a");
    expect(secretGets(after)).toBe(1);
    expect(password(after)).toBe("late");
  });
});
