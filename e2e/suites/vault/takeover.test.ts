// The active pod deleted under a reader: a standby takes over, the new active is labelled and served by
// <name>-active, the deleted pod comes back (same name, same volume), is unsealed and rejoins as a standby; reads
// through <name>-active fail only in one window, between the deletion and the takeover.
import { type Client, Pod } from "@capstan/core";
import { connect, createNamespace, eventually, type TestNamespace } from "@capstan/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { installOperator, type OperatorRelease, vaultSuitesEnabled } from "./fixtures/operator-release.ts";
import { failureWindows, startReader } from "./fixtures/traffic.ts";
import { traffic } from "./fixtures/traffic-report.ts";
import { names, STATE_LABEL, VaultClusterKind } from "./fixtures/vault-api.ts";
import {
  checkVault,
  printFailureReport,
  serviceTarget,
  tearDownSuite,
  vaultCluster,
  waitAvailable,
  waitVault,
} from "./fixtures/vault-cluster.ts";
import { enableKv, health, kvPut } from "./fixtures/vault-http.ts";

const name = "takeover";
const minutes = (n: number) => n * 60_000;

let client: Client;
let nsObj: TestNamespace;
let op: OperatorRelease | undefined;
let ns = "";

describe.skipIf(!vaultSuitesEnabled)("VaultCluster: the active pod deleted", () => {
  beforeAll(async () => {
    ({ client } = connect());
    nsObj = await createNamespace(client, "vault-takeover");
    ns = nsObj.name;
    op = await installOperator(client, ns, ns);
    await client.create(VaultClusterKind, vaultCluster(ns, name));
  }, minutes(5));

  afterAll(() => tearDownSuite(client, [{ namespace: ns, name }], op, [nsObj]), minutes(5));

  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => printFailureReport(client, ns, name, op));
  });

  it(
    "a standby takes over, the deleted pod is unsealed and rejoins, reads fail only until the takeover",
    async () => {
      await waitAvailable(client, ns, name, 3, minutes(6));
      const before = await waitVault(client, ns, name, 3);
      const activeSvc = await serviceTarget(client, ns, names(name).activeService, before.ca, name);
      await enableKv(activeSvc, before.token);
      await kvPut(activeSvc, before.token, "takeover/probe", { v: "1" });

      const victim = before.active;
      const oldUid = (await client.get(Pod, victim, ns)).metadata.uid;
      const reader = startReader({
        target: async () => activeSvc,
        token: before.token,
        key: "takeover/probe",
        want: { v: "1" },
      });
      try {
        await eventually(() => reader.outcomes().some((o) => o.error === undefined), {
          timeoutMs: 30_000,
          message: "the reader reads",
        });
        const deletedAt = Date.now();
        await client.delete(Pod, victim, ns);

        // The takeover, as a client sees it: another pod is active (status and label), and <name>-active routes
        // to an active Vault again.
        const takeover = await eventually(
          async () => {
            const c = await client.get(VaultClusterKind, name, ns);
            const active = c.status?.active;
            if (active === undefined || active === victim) throw new Error(`status.active is ${active}`);
            const pod = await client.get(Pod, active, ns);
            if (pod.metadata.labels?.[STATE_LABEL] !== "active")
              throw new Error(`${active} not labelled active`);
            const at = Date.now();
            const h = await health(activeSvc);
            if (h.code !== 200) throw new Error(`${names(name).activeService} answers health ${h.code}`);
            return { active, at };
          },
          {
            timeoutMs: minutes(2),
            intervalMs: 250,
            message: "a standby becomes active behind <name>-active",
          },
        );
        expect(before.standbys).toContain(takeover.active);

        // The deleted pod comes back on its volume, unsealed, as a standby; raft peers are the same 3.
        await eventually(
          async () => {
            const pod = await client.get(Pod, victim, ns);
            return pod.metadata.uid !== oldUid && pod.metadata.labels?.[STATE_LABEL] === "standby";
          },
          { timeoutMs: minutes(4), intervalMs: 1_000, message: `the new ${victim} is an unsealed standby` },
        );
        const after = await waitVault(client, ns, name, 3);
        expect(after.active).toBe(takeover.active);
        expect(after.standbys).toContain(victim);
        expect(after.clusterId).toBe(before.clusterId);
        await waitAvailable(client, ns, name, 3);
        // A few more reads once everything is back, then the verdict.
        const settled = Date.now();
        await eventually(() => reader.outcomes().filter((o) => o.at > settled && !o.error).length >= 5, {
          timeoutMs: 60_000,
          message: "the reader reads after the pod rejoined",
        });
        const outcomes = await reader.stop();
        const windows = failureWindows(outcomes);
        console.log(traffic("takeover reader", outcomes, { deletedAt, takeoverAt: takeover.at }));

        expect(
          outcomes.filter((o) => o.at < deletedAt && o.error),
          "failures before the deletion",
        ).toEqual([]);
        // One window of failures at most (no flapping): it opens after the deletion and no read that started
        // after the takeover failed.
        expect(windows.length, JSON.stringify(windows)).toBeLessThanOrEqual(1);
        for (const w of windows) {
          expect(w.from).toBeGreaterThanOrEqual(deletedAt);
          expect(w.to, `last failed read (${w.error}) started after the takeover`).toBeLessThanOrEqual(
            takeover.at,
          );
        }
        // The restarted pod rejoined the same raft cluster (its node ID is its name, its data kept).
        expect((await checkVault(client, ns, name, 3)).targets.has(victim)).toBe(true);
      } finally {
        await reader.stop();
      }
    },
    minutes(12),
  );
});
