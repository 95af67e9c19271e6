// Init and its keys, against core's in-memory API server and a scripted Vault: the keys Secret is proven writable
// before Vault is asked to make keys; once it made them, they reach the Secret whatever the API server or the Lease
// does, and the operator says so while they do not.
import { type KubeObject, Secret } from "@capstan/core";
import { FakeApiServer, reconcileOnce } from "@capstan/core/testing";
import { afterEach, describe, expect, it } from "vitest";
import { VaultClusterKind } from "../api/vault-cluster.ts";
import { keysSecretName } from "../desired/names.ts";
import { INIT_STARTED_ANNOTATION } from "../desired/objects.ts";
import { cluster, podObjects, reconcile, serverKeeper } from "./test-fixture.ts";

const servers: FakeApiServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
});

/** A started server holding a cluster whose first reconcile ran (TLS, Services) and whose pod 0 answers. */
async function clusterReadyForInit(): Promise<FakeApiServer> {
  const first = await reconcileOnce(reconcile([], { initialized: false, sealed: true }), {
    kinds: [VaultClusterKind],
    objects: [cluster()],
    request: cluster(),
  });
  const server = await new FakeApiServer({
    kinds: [VaultClusterKind],
    objects: [...first.objects.filter((o) => o.kind !== "Pod"), ...podObjects(cluster(), 0)],
  }).start();
  servers.push(server);
  return server;
}

const secretName = keysSecretName(cluster());

function keysIn(server: FakeApiServer): Record<string, string> | undefined {
  const secret = server.get(Secret, secretName, "ns");
  if (secret === undefined) return undefined;
  return Object.fromEntries(
    Object.entries({ ...secret.data }).map(([k, v]) => [k, Buffer.from(v, "base64").toString()]),
  );
}

const marker = (server: FakeApiServer) =>
  server
    .all()
    .find((o: KubeObject) => o.kind === "PersistentVolumeClaim" && o.metadata.name === "data-demo-0")
    ?.metadata.annotations?.[INIT_STARTED_ANNOTATION];

const degraded = (server: FakeApiServer) =>
  server.get(VaultClusterKind, "demo", "ns")?.status?.conditions?.find((c) => c.type === "Degraded");

describe("init and the unseal keys", () => {
  it("the keys Secret is made and a key-shaped write dry-run before the marker and PUT /v1/sys/init; the keys follow", async () => {
    const server = await clusterReadyForInit();
    const keeper = serverKeeper();
    const calls: string[] = [];
    let atInit: { secret?: Record<string, string> | undefined; marker?: string | undefined } = {};
    const run = await reconcileOnce(
      reconcile(
        calls,
        { initialized: false, sealed: true },
        () => {
          atInit = {
            ...(keysIn(server) === undefined ? {} : { secret: keysIn(server) }),
            marker: marker(server),
          };
        },
        keeper.keys,
      ),
      { kinds: [VaultClusterKind], request: cluster(), server, setup: keeper.bind },
    );
    run.expectNoError();
    expect(calls).toEqual(["init 3/2 on demo-0.demo-internal.ns.svc"]);
    // At init: the Secret existed, empty, and the marker was set.
    expect(atInit.secret).toEqual({});
    expect(atInit.marker).toBeDefined();
    const secretWrites = run.requests.filter(
      (r) => r.kind === "Secret" && r.name !== "demo-ca" && r.verb !== "get",
    );
    expect(secretWrites.map((r) => `${r.verb}${r.query.dryRun ? " (dry run)" : ""}`).slice(0, 2)).toEqual([
      "create",
      "patch (dry run)",
    ]);
    const dryRun = secretWrites[1]?.body as { data: Record<string, string> };
    expect(Object.keys(dryRun.data).sort()).toEqual([
      "root-token",
      "unseal-key-0",
      "unseal-key-1",
      "unseal-key-2",
    ]);
    // After: the keys and the root token, no owner (retainKeysOnDelete), readiness fine.
    expect(keysIn(server)).toEqual({
      "unseal-key-0": "QQ==",
      "unseal-key-1": "Qg==",
      "unseal-key-2": "Qw==",
      "root-token": "hvs.root",
    });
    expect(server.get(Secret, secretName, "ns")?.metadata.ownerReferences ?? []).toEqual([]);
    expect(keeper.keys.check()).toBe(true);
    expect(run.events.map((e) => e.reason)).toContain("InitVault");
  });

  it.each([
    ["RBAC forbids creating it", { verb: "create" as const }, 403],
    ["an admission policy refuses the keys", { verb: "patch" as const }, 422],
  ])(
    "a keys Secret the API server would refuse (%s): no marker, no init, Degraded KeysSecretNotWritable",
    async (_, match, code) => {
      const server = await clusterReadyForInit();
      server.fail({ ...match, kind: "Secret" }, code, {
        message: "refused by the test",
      });
      const keeper = serverKeeper();
      const calls: string[] = [];
      const run = await reconcileOnce(
        reconcile(calls, { initialized: false, sealed: true }, undefined, keeper.keys),
        { kinds: [VaultClusterKind], request: cluster(), server, setup: keeper.bind },
      );
      run.expectNoError();
      expect(calls).toEqual([]);
      expect(marker(server)).toBeUndefined();
      expect(degraded(server)).toMatchObject({ status: "True", reason: "KeysSecretNotWritable" });
      expect(degraded(server)?.message).toContain("refused by the test");
      expect(run.events.find((e) => e.reason === "KeysSecretNotWritable")?.type).toBe("Warning");
    },
  );

  it("an API server that refuses the keys after init (longer than the step waits): KeysNotStored until it takes them, then the cluster goes on", async () => {
    const server = await clusterReadyForInit();
    const keeper = serverKeeper({ stepWaitMs: 300 });
    const calls: string[] = [];
    const state = { initialized: false, sealed: true };
    let outage: { remove(): void } | undefined;
    const run = await reconcileOnce(
      reconcile(
        calls,
        state,
        () => {
          outage = server.fail({ kind: "Secret", verb: ["create", "patch", "update"] }, 503);
        },
        keeper.keys,
      ),
      { kinds: [VaultClusterKind], request: cluster(), server, setup: keeper.bind },
    );
    expect(calls).toEqual(["init 3/2 on demo-0.demo-internal.ns.svc"]);
    expect(keysIn(server)).toEqual({});
    expect(() => keeper.keys.check()).toThrow(/demo-unseal-keys/);
    expect(run.events.map((e) => e.reason)).toEqual(expect.arrayContaining(["KeysNotStored"]));

    // While the keys are pending: reported, and nothing else done (no InitResponseLost, no Vault call).
    const during = await reconcileOnce(reconcile(calls, state, undefined, keeper.keys), {
      kinds: [VaultClusterKind],
      request: cluster(),
      server,
      setup: keeper.bind,
    });
    during.expectNoError();
    expect(calls).toEqual(["init 3/2 on demo-0.demo-internal.ns.svc"]);
    expect(degraded(server)).toMatchObject({ status: "True", reason: "KeysNotStored" });
    // The pending keys never show up in status, events or messages.
    expect(JSON.stringify(server.get(VaultClusterKind, "demo", "ns")?.status)).not.toContain("hvs.root");

    // Let many attempts fail first (each one a refused write), then the API server comes back.
    const attempts = () => keeper.keys.pending("ns", "demo")?.attempts ?? 0;
    while (attempts() < 10) await new Promise((r) => setTimeout(r, 20));
    outage?.remove();
    await keeper.keys.idle();
    expect(keeper.keys.check()).toBe(true);
    expect(keysIn(server)).toMatchObject({ "unseal-key-0": "QQ==", "root-token": "hvs.root" });

    const after = await reconcileOnce(reconcile(calls, state, undefined, keeper.keys), {
      kinds: [VaultClusterKind],
      request: cluster(),
      server,
      setup: keeper.bind,
    });
    after.expectNoError();
    expect(calls).toEqual(["init 3/2 on demo-0.demo-internal.ns.svc", "unseal 3"]);
  });

  it("the Lease lost while PUT /v1/sys/init runs: the init is not abandoned and its keys still reach the Secret", async () => {
    const server = await clusterReadyForInit();
    const keeper = serverKeeper();
    const calls: string[] = [];
    let signal: AbortSignal | undefined;
    const inner = reconcile(
      calls,
      { initialized: false, sealed: true },
      // Vault answers only after the reconcile's signal aborted (core aborts it when the Lease is lost).
      () =>
        new Promise<void>((resolve) => {
          if (signal?.aborted) resolve();
          else signal?.addEventListener("abort", () => resolve());
        }),
      keeper.keys,
    );
    const run = await reconcileOnce(
      (req, ctx) => {
        signal = ctx.signal;
        return inner(req, ctx);
      },
      { kinds: [VaultClusterKind], request: cluster(), server, setup: keeper.bind, timeoutMs: 5_000 },
    );
    expect(signal?.aborted).toBe(true);
    expect(calls).toEqual(["init 3/2 on demo-0.demo-internal.ns.svc"]);
    await keeper.keys.idle();
    expect(keysIn(server)).toMatchObject({
      "unseal-key-0": "QQ==",
      "unseal-key-2": "Qw==",
      "root-token": "hvs.root",
    });
    // No second init is possible meanwhile: the marker was set before the call.
    expect(marker(server)).toBeDefined();
    expect(run.events.map((e) => e.reason)).not.toContain("KeysNotStored");
  });
});
