// Reconciles during a switch of the listener certificate's source (operator-issued -> a cert-manager Secret):
// the operator's client trusts the CA of the Secret each pod still mounts besides spec's, so it keeps seeing,
// stepping down and restarting the pods (one at a time); an operator restarted mid-switch trusts both again (the
// pods' volumes are the record); its own certificate is renewed while a pod serves it; the switch ends with only
// the new CA trusted. Core's reconcileOnce with a scripted Vault that refuses a client not trusting its CA.
import { type KubeObject, Pod, Secret } from "@capstan/core";
import { reconcileOnce } from "@capstan/core/testing";
import { Registry } from "prom-client";
import { beforeAll, describe, expect, it } from "vitest";
import { type VaultCluster, VaultClusterKind } from "../api/vault-cluster.ts";
import { tlsHosts } from "../desired/names.ts";
import { base64Values, tlsSecret } from "../desired/objects.ts";
import { type CertificatePair, createCA, issueServerCertificate } from "../desired/tls.ts";
import { type VaultClient, VaultError, type VaultHealth } from "../vault/vault-client.ts";
import { reconcileVaultCluster } from "./controller.ts";
import { VaultOperatorMetrics } from "./metrics.ts";
import type { VaultTarget } from "./observe.ts";
import { cluster, keysSecretWithToken, noKeys, OPERATOR_TOKEN_INFO, podObjects } from "./test-fixture.ts";

const HOUR = 3_600_000;
const operatorIssued = () => cluster(3);
const toCertManager = (): VaultCluster => {
  const c = cluster(3);
  c.spec.tls = { ...c.spec.tls, secretName: "vault-cm" };
  return c;
};

let operatorCA: CertificatePair;
let certManagerCA: CertificatePair;
let operatorSecrets: KubeObject[];
let certManagerSecret: KubeObject;

beforeAll(async () => {
  const now = new Date();
  operatorCA = await createCA("demo.ns Vault CA", now);
  certManagerCA = await createCA("cert-manager CA", now);
  const served = await issueServerCertificate(operatorCA, tlsHosts(cluster(3)), now, 2160 * HOUR);
  operatorSecrets = [
    tlsSecret(cluster(3), "demo-ca", operatorCA),
    tlsSecret(cluster(3), "demo-tls", served, operatorCA.cert),
  ];
  const cm = await issueServerCertificate(certManagerCA, tlsHosts(cluster(3)), now, 2160 * HOUR);
  // cert-manager's Secret: not labelled by the operator (read through the client, not the cache).
  certManagerSecret = {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "vault-cm", namespace: "ns" },
    type: "kubernetes.io/tls",
    data: base64Values({ "tls.crt": cm.cert, "tls.key": cm.key, "ca.crt": certManagerCA.cert }),
  } as KubeObject;
});

/** The operator's Secret demo-tls a day from expiry, within renewBefore (720h). */
async function expiringOperatorTls(): Promise<KubeObject> {
  const expiring = await issueServerCertificate(
    operatorCA,
    tlsHosts(cluster(3)),
    new Date(Date.now() - 2159 * HOUR),
    2160 * HOUR,
  );
  return tlsSecret(cluster(3), "demo-tls", expiring, operatorCA.cert);
}

/** Running, Ready pod `ordinal` built from `c` (so mounting c's certificate Secret). */
const readyPod = (c: VaultCluster, ordinal: number): KubeObject[] =>
  podObjects(c, ordinal).map((o) => {
    if (o.kind === "Pod") {
      (o as { status?: unknown }).status = {
        phase: "Running",
        podIP: `10.0.0.${ordinal + 1}`,
        conditions: [{ type: "Ready", status: "True" }],
      };
    }
    return o;
  });

/**
 * A scripted three-node Vault: node i (10.0.0.i+1) serves a certificate of `serves[i]`'s CA and refuses a client
 * whose trusted CAs lack it, as Node's TLS does; `active` is the active node. Records the CAs each client trusted.
 */
function vault(serves: CertificatePair[], active: number, trusted: string[][], calls: string[]) {
  return (t: VaultTarget) => {
    const ordinal = Number(t.address.match(/10\.0\.0\.(\d+)/)?.[1] ?? 0) - 1;
    const pem = serves[ordinal]?.cert.trim() ?? "";
    const names = [operatorCA, certManagerCA].filter((ca) => t.ca.includes(ca.cert.trim()));
    trusted.push(names.map((ca) => (ca === operatorCA ? "operator" : "cert-manager")));
    const handshake = () => {
      if (!t.ca.includes(pem)) {
        throw new VaultError(
          "/v1/sys/health",
          0,
          ["unable to verify the first certificate"],
          undefined,
          "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
        );
      }
    };
    return {
      close: async () => undefined,
      health: async (): Promise<VaultHealth> => {
        handshake();
        return {
          initialized: true,
          sealed: false,
          standby: ordinal !== active,
          version: "1.14.8",
          cluster_id: "cid-1",
        };
      },
      sealStatus: async () => ({ sealed: false, initialized: true, t: 2, n: 3, progress: 0 }),
      raftConfiguration: async () => {
        handshake();
        return [0, 1, 2].map((i) => ({
          node_id: `demo-${i}`,
          address: `demo-${i}:8201`,
          leader: i === active,
          voter: true,
          protocol_version: "3",
        }));
      },
      lookupSelf: async () => OPERATOR_TOKEN_INFO,
      stepDown: async () => {
        handshake();
        calls.push(`step-down demo-${ordinal}`);
      },
    } as unknown as VaultClient;
  };
}

const reconciler = (serves: CertificatePair[], active: number, trusted: string[][], calls: string[]) =>
  ((req, ctx) =>
    reconcileVaultCluster(req, ctx, {
      metrics: new VaultOperatorMetrics(new Registry()),
      keys: noKeys(),
      reloaderImage: "busybox:1.37",
      vaultClient: vault(serves, active, trusted, calls),
    })) as Parameters<typeof reconcileOnce>[0];

const tlsReady = (objects: readonly KubeObject[]) =>
  (objects.find((o) => o.kind === "VaultCluster") as VaultCluster | undefined)?.status?.conditions?.find(
    (c) => c.type === "TLSReady",
  );

describe("a switch of the listener certificate's source", () => {
  it("both CAs are trusted: the standby is restarted onto the new Secret, then (after an operator restart) the next", async () => {
    const trusted: string[][] = [];
    const calls: string[] = [];
    const old = [0, 1, 2].flatMap((i) => readyPod(operatorIssued(), i));
    const first = await reconcileOnce(reconciler([operatorCA, operatorCA, operatorCA], 0, trusted, calls), {
      kinds: [VaultClusterKind],
      objects: [toCertManager(), ...operatorSecrets, certManagerSecret, keysSecretWithToken(), ...old],
      request: toCertManager(),
    });
    first.expectNoError();
    expect(trusted.length).toBeGreaterThan(0);
    for (const t of trusted) expect(t).toEqual(["operator", "cert-manager"]);
    expect(first.events.map((e) => e.reason)).toEqual(["TLSSwitchStarted", "DeletePod"]);
    expect(first.get(Pod, "demo-1", "ns")).toBeUndefined();
    expect(first.get(Pod, "demo-0", "ns")).toBeDefined();
    expect(tlsReady(first.objects)).toMatchObject({ status: "True", reason: "Switching" });
    expect(tlsReady(first.objects)?.message).toContain("demo-0, demo-1, demo-2 still serve Secret demo-tls");

    // A new operator process (nothing kept in memory): demo-1 is back on the new Secret, the others still on the
    // old one; it trusts both again from the pods' volumes, and restarts demo-2.
    trusted.length = 0;
    const mixed = [
      ...first.objects.filter((o) => o.kind !== "Pod"),
      ...first.objects.filter((o) => o.kind === "Pod" && o.metadata.name !== "demo-1"),
      ...readyPod(toCertManager(), 1).filter((o) => o.kind === "Pod"),
    ];
    const second = await reconcileOnce(
      reconciler([operatorCA, certManagerCA, operatorCA], 0, trusted, calls),
      {
        kinds: [VaultClusterKind],
        objects: mixed,
        request: toCertManager(),
      },
    );
    second.expectNoError();
    for (const t of trusted) expect(t).toEqual(["operator", "cert-manager"]);
    expect(second.events.map((e) => e.reason)).toEqual(["DeletePod"]);
    expect(second.get(Pod, "demo-2", "ns")).toBeUndefined();
    expect(tlsReady(second.objects)?.message).toContain("demo-0, demo-2 still serve Secret demo-tls");
  });

  it("the active one is stepped down while it serves the old certificate; its certificate is renewed until then", async () => {
    const trusted: string[][] = [];
    const calls: string[] = [];
    // demo-tls a day from expiry, within renewBefore (720h): renewed, though spec now names vault-cm.
    const objects = [
      toCertManager(),
      operatorSecrets[0]!,
      await expiringOperatorTls(),
      certManagerSecret,
      keysSecretWithToken(),
      ...readyPod(operatorIssued(), 0),
      ...readyPod(toCertManager(), 1),
      ...readyPod(toCertManager(), 2),
    ];
    const run = await reconcileOnce(
      reconciler([operatorCA, certManagerCA, certManagerCA], 0, trusted, calls),
      {
        kinds: [VaultClusterKind],
        objects,
        request: toCertManager(),
      },
    );
    run.expectNoError();
    expect(calls).toEqual(["step-down demo-0"]);
    expect(run.events.map((e) => e.reason)).toEqual(["CertificateRenewed", "TLSSwitchStarted", "StepDown"]);
    expect(run.events[0]?.note).toContain("pods still serve it while they move to Secret vault-cm");
  });

  it("done: every pod serves the new Secret, only its CA is trusted, the old certificate is left to expire", async () => {
    const trusted: string[][] = [];
    const calls: string[] = [];
    const switching = toCertManager();
    switching.status = {
      conditions: [
        {
          type: "TLSReady",
          status: "True",
          reason: "Switching",
          message: "",
          lastTransitionTime: "2026-12-01T00:00:00Z",
        },
      ],
    };
    const run = await reconcileOnce(
      reconciler([certManagerCA, certManagerCA, certManagerCA], 1, trusted, calls),
      {
        kinds: [VaultClusterKind],
        objects: [
          switching,
          operatorSecrets[0]!,
          await expiringOperatorTls(),
          certManagerSecret,
          keysSecretWithToken(),
          ...[0, 1, 2].flatMap((i) => readyPod(toCertManager(), i)),
        ],
        request: switching,
      },
    );
    run.expectNoError();
    expect(trusted.length).toBeGreaterThan(0);
    for (const t of trusted) expect(t).toEqual(["cert-manager"]);
    expect(run.events.map((e) => e.reason)).toEqual(["TLSSwitchDone"]);
    expect(run.writesOf(Secret).filter((w) => w.name === "demo-tls")).toEqual([]);
    expect(tlsReady(run.objects)).toMatchObject({ status: "True", reason: "CertificateReady" });
  });
});
