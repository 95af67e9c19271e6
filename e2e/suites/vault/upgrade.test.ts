// A rolling upgrade 1.14.6 -> 1.14.8 on a change of spec.version alone, with a reader and a writer running:
// standbys first, one at a time, each back and unsealed before the next; the active node last (after a step-down);
// no acknowledged write lost, and reads and writes fail only in short windows while the active node changes. The
// reader and the writer go through <name>-active, which follows Vault's own label (vault-active, set by each pod's
// service registration): the suite prints the failures around the step-down, the figures docs/operators/vault.md
// quotes.
import { type Client, type ObjectOf, type Pod, Service } from "@capstan/core";
import { connect, createNamespace, eventually, type TestNamespace } from "@capstan/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { installOperator, type OperatorRelease, vaultSuitesEnabled } from "./fixtures/operator-release.ts";
import { failureWindows, lostWrites, type Outcome, startReader, startWriter } from "./fixtures/traffic.ts";
import { traffic } from "./fixtures/traffic-report.ts";
import { names, VaultClusterKind } from "./fixtures/vault-api.ts";
import {
  clusterEvents,
  podReady,
  printFailureReport,
  serviceTarget,
  tearDownSuite,
  vaultCluster,
  vaultPods,
  waitAvailable,
  waitVault,
} from "./fixtures/vault-cluster.ts";
import { enableKv, kvPut } from "./fixtures/vault-http.ts";

const name = "upgrade";

/** The vault container the kubelet runs: its image and readiness. */
function runningVault(pod: ObjectOf<typeof Pod>) {
  return pod.status?.containerStatuses?.find((c) => c.name === "vault");
}
const from = "1.14.6";
const to = "1.14.8";
const minutes = (n: number) => n * 60_000;

/**
 * The requests from `at` (a step-down; requests up to 2 s before it count, the event's time having second
 * precision) until the first success after a failure: how many failed, over how long, the last error.
 */
function stepDownWindow(outcomes: Outcome[], at: number): string {
  const after = outcomes.filter((o) => o.at >= at - 2_000);
  const firstFailure = after.findIndex((o) => o.error !== undefined);
  if (firstFailure < 0) return `step-down: no request failed (${after.length} requests after it)`;
  const rest = after.slice(firstFailure);
  const recovered = rest.findIndex((o) => o.error === undefined);
  const failed = recovered < 0 ? rest : rest.slice(0, recovered);
  const first = failed[0]!;
  const last = failed.at(-1)!;
  const end = recovered < 0 ? last.at + last.ms : (rest[recovered]?.at ?? last.at);
  return `step-down: ${failed.length} request(s) failed, ${((first.at - at) / 1000).toFixed(1)}s after the StepDown event, for ${((end - first.at) / 1000).toFixed(1)}s until the next success (last error: ${last.error})`;
}

let client: Client;
let nsObj: TestNamespace;
let op: OperatorRelease | undefined;
let ns = "";

describe.skipIf(!vaultSuitesEnabled)(`VaultCluster rolling upgrade ${from} -> ${to}`, () => {
  beforeAll(async () => {
    ({ client } = connect());
    nsObj = await createNamespace(client, "vault-upgrade");
    ns = nsObj.name;
    op = await installOperator(client, ns, ns);
    await client.create(VaultClusterKind, vaultCluster(ns, name, { version: from }));
  }, minutes(5));

  afterAll(() => tearDownSuite(client, [{ namespace: ns, name }], op, [nsObj]), minutes(5));

  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => printFailureReport(client, ns, name, op));
  });

  it(
    "standbys first, one at a time, the active last; nothing lost while a reader and a writer run",
    async () => {
      const n = names(name);
      await waitAvailable(client, ns, name, 3, minutes(6));
      const before = await waitVault(client, ns, name, 3);
      for (const v of before.versions.values()) expect(v).toBe(from);
      const activeSvc = await serviceTarget(client, ns, n.activeService, before.ca, name);
      const target = async () => activeSvc;
      await enableKv(await target(), before.token);
      await kvPut(await target(), before.token, "upgrade/probe", { v: "1" });

      const reader = startReader({ target, token: before.token, key: "upgrade/probe", want: { v: "1" } });
      const writer = startWriter({ target, token: before.token, prefix: "upgrade/w-" });
      try {
        await eventually(() => writer.acked() > 0, { timeoutMs: 30_000, message: "the writer writes" });
        const startedAt = Date.now();
        // Watch the pods: the order in which each comes back ready running the new image (the container the kubelet
        // runs, not the pod spec: an image changed in place is still the old container until the kubelet restarts
        // it), and that never two are away (not ready) at once.
        const upgradedOrder: string[] = [];
        const premature: string[] = [];
        let mostAway = 0;
        await client.patch(VaultClusterKind, name, ns, { spec: { version: to } });
        await eventually(
          async () => {
            const c = await client.get(VaultClusterKind, name, ns);
            const pods = await vaultPods(client, ns, name);
            const away = 3 - pods.filter(podReady).length;
            // The status may claim the upgrade done only once every pod runs the new image.
            const progressing = c.status?.conditions?.find((x) => x.type === "Progressing")?.status;
            const stale = pods
              .filter((p) => !runningVault(p)?.image.endsWith(`:${to}`))
              .map((p) => p.metadata.name);
            if (c.status?.currentVersion === to && progressing === "False" && stale.length > 0) {
              premature.push(
                `status says ${to}, not progressing, while ${stale.join(", ")} run(s) the old image`,
              );
            }
            mostAway = Math.max(mostAway, away);
            for (const p of pods) {
              const podName = p.metadata.name ?? "";
              const running = runningVault(p);
              if (running?.image.endsWith(`:${to}`) && running.ready && !upgradedOrder.includes(podName)) {
                upgradedOrder.push(podName);
              }
            }
            return upgradedOrder.length === 3;
          },
          { timeoutMs: minutes(10), intervalMs: 250, message: `every pod runs ${to} and is ready` },
        );
        const c = await waitAvailable(client, ns, name, 3, minutes(4));
        const after = await waitVault(client, ns, name, 3);
        const upgradedAt = Date.now();
        const writes = writer.acked();
        await eventually(() => writer.acked() > writes + 5, {
          timeoutMs: 60_000,
          message: "writes go on after",
        });
        const [readOutcomes, writeOutcomes] = [await reader.stop(), await writer.stop()];
        console.log(
          `upgrade order ${upgradedOrder.join(" -> ")} (active before: ${before.active}); at most ${mostAway} pod(s) away`,
        );
        console.log(traffic("upgrade reader", readOutcomes, { patchedAt: startedAt, upgradedAt }));
        console.log(traffic("upgrade writer", writeOutcomes, { patchedAt: startedAt, upgradedAt }));

        expect.soft(c.status?.currentVersion).toBe(to);
        for (const v of after.versions.values()) expect.soft(v).toBe(to);
        expect.soft(after.clusterId).toBe(before.clusterId);
        // Standbys first, one at a time; the node that was active at the start is upgraded last.
        expect.soft(upgradedOrder.at(-1), "the old active is upgraded last").toBe(before.active);
        expect.soft(upgradedOrder.slice(0, 2).sort()).toEqual([...before.standbys].sort());
        expect.soft(mostAway, "never two pods away at once").toBeLessThanOrEqual(1);
        expect.soft(premature, "the status ran ahead of the pods").toEqual([]);
        // One at a time: each step (the next pod's upgrade, the step-down) comes after the previous pod's new
        // vault container started (container start times have second precision).
        const steps = (await clusterEvents(client, ns, name)).filter((e) =>
          ["UpgradePod", "StepDown"].includes(e.reason),
        );
        // The step-down's window through <name>-active: the failures from the StepDown event to the first success
        // after it (the figures in docs/operators/vault.md, "Upgrade").
        const stepDown = steps.find((e) => e.reason === "StepDown");
        expect.soft(stepDown, "a StepDown event").toBeDefined();
        if (stepDown !== undefined) {
          const at = Date.parse(stepDown.time);
          for (const [label, outcomes] of [
            ["reader", readOutcomes],
            ["writer", writeOutcomes],
          ] as const) {
            console.log(`${label} ${stepDownWindow(outcomes, at)}`);
          }
        }
        expect
          .soft((await client.get(Service, n.activeService, ns)).spec?.selector?.["vault-active"])
          .toBe("true");
        const pods = new Map((await vaultPods(client, ns, name)).map((p) => [p.metadata.name ?? "", p]));
        for (const [i, step] of steps.entries()) {
          const next = steps[i + 1];
          if (step.reason !== "UpgradePod" || next === undefined) continue;
          const pod = [...pods.keys()].find((p) => step.note.includes(` ${p} `));
          const started =
            pod === undefined ? undefined : runningVault(pods.get(pod)!)?.state?.running?.startedAt;
          expect
            .soft(
              Date.parse(String(started)) <= Date.parse(next.time),
              `${pod}'s new vault started at ${started}, but the next step (${next.reason}: ${next.note}) came at ${next.time}`,
            )
            .toBe(true);
        }
        // Nothing acknowledged was lost.
        expect.soft(await lostWrites(await target(), after.token, "upgrade/w-", writer.acked())).toEqual([]);
        // Failures only while the active node changed hands: few windows (one per step-down), none after.
        for (const [label, outcomes] of [
          ["reader", readOutcomes],
          ["writer", writeOutcomes],
        ] as const) {
          const windows = failureWindows(outcomes);
          expect.soft(windows.length, `${label}: ${JSON.stringify(windows)}`).toBeLessThanOrEqual(2);
          for (const w of windows)
            expect.soft(w.to, `${label} failed after the upgrade`).toBeLessThan(upgradedAt);
        }
      } finally {
        await reader.stop();
        await writer.stop();
      }
    },
    minutes(20),
  );
});
