// Certificate rotation with a short validity (tls.duration 6m, renewBefore 5m: renewed about a minute after it is
// issued): every pod serves the new certificate (Vault re-reads it on SIGHUP from the reloader sidecar), status.tls
// moves on, and a client that verifies the CA and opens a new connection per request never fails.
import type { Client } from "@capstan/core";
import { connect, createNamespace, eventually, type TestNamespace } from "@capstan/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { installOperator, type OperatorRelease, vaultSuitesEnabled } from "./fixtures/operator-release.ts";
import { failures, startReader } from "./fixtures/traffic.ts";
import { traffic } from "./fixtures/traffic-report.ts";
import { names, VaultClusterKind } from "./fixtures/vault-api.ts";
import {
  condition,
  printFailureReport,
  serviceTarget,
  tearDownSuite,
  vaultCluster,
  waitAvailable,
  waitVault,
} from "./fixtures/vault-cluster.ts";
import { enableKv, kvPut, servedCertificate } from "./fixtures/vault-http.ts";

const name = "rotate";
const minutes = (n: number) => n * 60_000;

let client: Client;
let nsObj: TestNamespace;
let op: OperatorRelease | undefined;
let ns = "";

describe.skipIf(!vaultSuitesEnabled)("VaultCluster certificate rotation", () => {
  beforeAll(async () => {
    ({ client } = connect());
    nsObj = await createNamespace(client, "vault-rotate");
    ns = nsObj.name;
    op = await installOperator(client, ns, ns);
    await client.create(
      VaultClusterKind,
      vaultCluster(ns, name, { tls: { duration: "6m", renewBefore: "5m" } }),
    );
  }, minutes(5));

  afterAll(() => tearDownSuite(client, [{ namespace: ns, name }], op, [nsObj]), minutes(5));

  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => printFailureReport(client, ns, name, op));
  });

  it(
    "every pod serves the renewed certificate, and no request fails meanwhile",
    async () => {
      await waitAvailable(client, ns, name, 3, minutes(6));
      const view = await waitVault(client, ns, name, 3);
      // The baseline: one certificate for the cluster, the one the status reports, served by every pod. On a
      // slow start the first renewal (a minute after issue) may already be under way: wait for it to settle.
      const { notAfter0, serial0 } = await eventually(
        async () => {
          const c0 = await client.get(VaultClusterKind, name, ns);
          expect(condition(c0, "TLSReady")?.status).toBe("True");
          const notAfter0 = c0.status?.tls?.notAfter ?? "";
          expect(Date.parse(notAfter0)).not.toBeNaN();
          const served = await Promise.all([...view.targets.values()].map((t) => servedCertificate(t)));
          expect(new Set(served.map((c) => c.serial)).size).toBe(1);
          for (const cert of served)
            expect(cert.notAfter.toISOString()).toBe(new Date(notAfter0).toISOString());
          return { notAfter0, serial0: served[0]?.serial };
        },
        { timeoutMs: minutes(2), message: "every pod serves the certificate status.tls reports" },
      );

      const activeSvc = await serviceTarget(client, ns, names(name).activeService, view.ca, name);
      await enableKv(activeSvc, view.token);
      await kvPut(activeSvc, view.token, "rotate/probe", { v: "1" });
      // Reads through every pod in turn (each verifies the CA and the name on a new connection).
      const pods = [...view.targets.values()];
      let turn = 0;
      const reader = startReader({
        target: async () => pods[turn++ % pods.length]!,
        token: view.token,
        key: "rotate/probe",
        want: { v: "1" },
      });
      try {
        let renewedSeenAt: number | undefined; // when status.tls first showed the renewal
        const rotated = await eventually(
          async () => {
            const c = await client.get(VaultClusterKind, name, ns);
            const notAfter = c.status?.tls?.notAfter ?? "";
            if (Date.parse(notAfter) <= Date.parse(notAfter0))
              throw new Error(`status.tls.notAfter ${notAfter}`);
            renewedSeenAt ??= Date.now();
            for (const [pod, target] of view.targets) {
              const served = await servedCertificate(target);
              if (served.serial === serial0) throw new Error(`${pod} still serves the old certificate`);
              if (served.notAfter.getTime() !== Date.parse(notAfter)) {
                throw new Error(
                  `${pod} serves a certificate valid until ${served.notAfter.toISOString()}, status says ${notAfter}`,
                );
              }
            }
            return { notAfter, at: Date.now() };
          },
          { timeoutMs: minutes(5), intervalMs: 2_000, message: "every pod serves a renewed certificate" },
        );
        // The pods are stamped with the new certificate's fingerprint, so the kubelet refreshes the Secret at once.
        console.log(
          `renewed certificate served by every pod ${((rotated.at - (renewedSeenAt ?? rotated.at)) / 1000).toFixed(1)}s after status.tls showed it`,
        );
        await eventually(() => reader.outcomes().filter((o) => o.at > rotated.at).length >= 10, {
          timeoutMs: 60_000,
          message: "reads go on after the rotation",
        });
        const outcomes = await reader.stop();
        console.log(traffic("rotation reader", outcomes, { rotatedAt: rotated.at }));
        expect(outcomes.length).toBeGreaterThan(10);
        expect(failures(outcomes)).toEqual([]);
        // The pods were not restarted to rotate: the same Vault processes (the same raft peers, unsealed).
        const after = await waitVault(client, ns, name, 3);
        for (const p of after.pods) {
          const old = view.pods.find((o) => o.metadata.name === p.metadata.name);
          expect(p.metadata.uid, `${p.metadata.name} is the same pod`).toBe(old?.metadata.uid);
          const vault = p.status?.containerStatuses?.find((s) => s.name === "vault");
          expect(vault?.restartCount ?? 0, `${p.metadata.name}: vault restarts`).toBe(0);
        }
      } finally {
        await reader.stop();
      }
    },
    minutes(12),
  );
});
