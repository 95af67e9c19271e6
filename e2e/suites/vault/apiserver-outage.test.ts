// The API server gone for 60 s right after PUT /v1/sys/init: the unseal keys exist only in the operator's memory
// while it is away (the operator loses its Lease meanwhile, and its process may be stopped and started); they must
// reach their Secret once it is back, and the cluster come up unsealed with them, with no second init.
// It kills kube-apiserver under everyone's feet: e2e/run.sh runs it alone, after every lane (never beside another
// suite); it needs the local cluster's script (CAPSTAN_CLUSTER_SCRIPT) and skips without it.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { type Client, PersistentVolumeClaim } from "@capstan/core";
import { connect, createNamespace, eventually, type TestNamespace } from "@capstan/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  installOperator,
  type OperatorRelease,
  operatorPods,
  vaultSuitesEnabled,
} from "./fixtures/operator-release.ts";
import { names, VaultClusterKind } from "./fixtures/vault-api.ts";
import {
  clusterEvents,
  initCount,
  keysSecret,
  printFailureReport,
  tearDownSuite,
  vaultCluster,
  waitAvailable,
  waitVault,
} from "./fixtures/vault-cluster.ts";

const run = promisify(execFile);
const clusterScript = process.env.CAPSTAN_CLUSTER_SCRIPT;
const name = "outage";
/** The operator's mark on the first claim, written just before it calls PUT /v1/sys/init. */
const INIT_STARTED = "vault.capstan.dev/init-started";
const OUTAGE_MS = 60_000;
const minutes = (n: number) => n * 60_000;

let client: Client;
let nsObj: TestNamespace;
let op: OperatorRelease | undefined;
let ns = "";

describe.skipIf(!vaultSuitesEnabled || !clusterScript)(
  "Vault operator: the API server away right after init",
  () => {
    beforeAll(async () => {
      ({ client } = connect());
      nsObj = await createNamespace(client, "vault-outage");
      ns = nsObj.name;
      op = await installOperator(client, ns, ns);
    }, minutes(5));

    afterAll(() => tearDownSuite(client, [{ namespace: ns, name }], op, [nsObj]), minutes(5));

    beforeEach(({ onTestFailed }) => {
      onTestFailed(() => printFailureReport(client, ns, name, op));
    });

    it(
      "60 s without an API server right after init: the keys reach their Secret, the cluster unseals with them, one init",
      async () => {
        const restartsBefore = (await operatorPods(client, op!)).map(
          (p) => p.status?.containerStatuses?.[0]?.restartCount ?? 0,
        );
        await client.create(VaultClusterKind, vaultCluster(ns, name, { replicas: 1 }));
        await eventually(
          async () => {
            const claim = await client.get(PersistentVolumeClaim, names(name).claim(names(name).pod(0)), ns);
            return claim.metadata.annotations?.[INIT_STARTED] !== undefined;
          },
          { timeoutMs: minutes(4), intervalMs: 50, message: "the init-started marker is written" },
        );
        // The marker is written just before PUT /v1/sys/init: the API server goes away with the init in flight.
        await run(clusterScript!, ["stop-apiserver"]);
        const stoppedAt = Date.now();
        try {
          await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
        } finally {
          await run(clusterScript!, ["start-apiserver"], { timeout: 120_000 });
        }
        console.log(`the API server was away for ${Math.round((Date.now() - stoppedAt) / 1000)} s`);

        const c = await waitAvailable(client, ns, name, 1, minutes(6));
        const view = await waitVault(client, ns, name, 1);
        const keys = await keysSecret(client, ns, name);
        expect(Object.keys(keys).filter((k) => k.startsWith("unseal-key-")).length).toBeGreaterThan(0);
        // The keys in the Secret are the ones of the cluster that serves: no second init made other ones.
        expect(c.status?.clusterID).toBe(view.clusterId);
        expect(await initCount(client, ns, name), "init steps recorded").toBeLessThanOrEqual(1);
        expect(c.status?.conditions?.find((x) => x.type === "Degraded")?.status).not.toBe("True");

        const reasons = (await clusterEvents(client, ns, name)).map((e) => `${e.reason} x${e.count}`);
        const restartsAfter = (await operatorPods(client, op!)).map(
          (p) => p.status?.containerStatuses?.[0]?.restartCount ?? 0,
        );
        console.log(
          `events: ${reasons.join(", ")}; operator restarts ${restartsBefore.join(",")} -> ${restartsAfter.join(",")}`,
        );
      },
      minutes(12),
    );
  },
);
