// A TLS cluster whose certificates cert-manager issues (spec.tls.<peer|client>.certManager), with a real cert-manager:
// a self-signed Issuer makes a CA, a CA Issuer signs; a 3-member cluster with that issuer for both ports becomes
// Available, the operator's Certificates are Ready, a client without a certificate is refused and a client with a
// certificate the issuer signed (a Certificate of the test's own) works.
//
// Where cert-manager can run only. The local cluster cannot run it: its controller is a nested Go module the module
// proxy does not serve, and its images are on quay.io, which this machine cannot reach. So the suite runs when
// CAPSTAN_CERT_MANAGER says how to get cert-manager:
//   install   install cert-manager's published Helm chart (https://charts.jetstack.io, version
//             $CAPSTAN_CERT_MANAGER_VERSION) into namespace cert-manager, and uninstall it afterwards
//             (e2e/cluster/kind/run.sh sets this);
//   present   cert-manager is installed already (its CRDs are checked, not skipped on).
// Unset, the suite is skipped and says why.
import { type Client, defineKind, type KubeObject, Secret } from "@capstan/core";
import { connect, createNamespace, eventually, helm, type TestNamespace } from "@capstan/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  etcdCluster,
  memberPods,
  podReady,
  printFailureReport,
  rangeAnswer,
  tearDownSuite,
  waitAvailable,
} from "./fixtures/etcd-cluster.ts";
import {
  type Certificate,
  CertificateKind,
  CLUSTER_LABEL,
  EtcdClient,
  type EtcdClientTLS,
  EtcdClusterKind,
} from "./fixtures/operator-api.ts";
import { etcdSuitesEnabled, installOperator, type OperatorRelease } from "./fixtures/operator-release.ts";

const mode = process.env.CAPSTAN_CERT_MANAGER ?? "";
// The newest cert-manager release the Go module proxy lists (github.com/cert-manager/cert-manager v1.21.2, 2026-09-10).
const version = process.env.CAPSTAN_CERT_MANAGER_VERSION || "v1.21.2";
const skipReason = !etcdSuitesEnabled
  ? "the etcd suites need a real node and Helm (CAPSTAN_REAL_NODE=1, CAPSTAN_HELM)"
  : mode === "install" || mode === "present"
    ? undefined
    : "cert-manager cannot run on this cluster (on the local cluster its controller image is on quay.io and its Go module is not served by the module proxy); set CAPSTAN_CERT_MANAGER=install (e2e/cluster/kind/run.sh does) or CAPSTAN_CERT_MANAGER=present";
if (skipReason !== undefined)
  console.log(`skipping "EtcdCluster with cert-manager certificates": ${skipReason}`);

/** cert-manager's Issuer, as far as the test writes it. */
const IssuerKind = defineKind<KubeObject & { spec: Record<string, unknown> }>({
  group: "cert-manager.io",
  version: "v1",
  kind: "Issuer",
  plural: "issuers",
  namespaced: true,
});

const name = "cm";
const minutes = (n: number) => n * 60_000;

let client: Client;
let nsObj: TestNamespace;
let op: OperatorRelease | undefined;
let ns = "";
let installedCertManager = false;

/** A Secret's PEM texts, when cert-manager has written ca.crt, tls.crt and tls.key. */
async function issuedPair(secretName: string): Promise<EtcdClientTLS> {
  const s = await client.get(Secret, secretName, ns);
  const d = Object.fromEntries(
    Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, "base64").toString()]),
  );
  const [ca, cert, key] = [d["ca.crt"], d["tls.crt"], d["tls.key"]];
  if (!ca || !cert || !key) throw new Error(`Secret ${secretName} lacks ca.crt, tls.crt or tls.key`);
  return { ca, cert, key };
}

const ready = (c: Certificate) =>
  c.status?.conditions?.some((x) => x.type === "Ready" && x.status === "True") === true;

/** A Certificate of the test's own (not the operator's), signed by `issuer`. */
function certificate(certName: string, issuer: string, spec: Record<string, unknown>): Certificate {
  return {
    apiVersion: CertificateKind.apiVersion,
    kind: CertificateKind.kind,
    metadata: { name: certName, namespace: ns },
    spec: {
      secretName: certName,
      issuerRef: { name: issuer, kind: "Issuer", group: "cert-manager.io" },
      privateKey: { algorithm: "ECDSA", size: 256, rotationPolicy: "Always" },
      ...spec,
    },
  } as Certificate;
}

/** Waits until the Certificate is Ready and its Secret complete. */
function waitIssued(certName: string): Promise<EtcdClientTLS> {
  return eventually(
    async () => {
      const c = await client.get(CertificateKind, certName, ns);
      if (!ready(c)) throw new Error(`Certificate ${certName} not Ready: ${JSON.stringify(c.status)}`);
      return issuedPair(c.spec.secretName);
    },
    { timeoutMs: minutes(2), intervalMs: 2_000, message: `Certificate ${certName} is issued` },
  );
}

describe.skipIf(skipReason !== undefined)("EtcdCluster with cert-manager certificates", () => {
  beforeAll(async () => {
    ({ client } = connect());
    if (mode === "install") {
      await helm([
        "upgrade",
        "--install",
        "cert-manager",
        "cert-manager",
        "--repo",
        "https://charts.jetstack.io",
        "--version",
        version,
        "--namespace",
        "cert-manager",
        "--create-namespace",
        "--set",
        "crds.enabled=true",
        "--wait",
        "--timeout",
        "300s",
      ]);
      installedCertManager = true;
    }
    // Present (or just installed): its API is served.
    await client.list(CertificateKind, { limit: 1 });
    nsObj = await createNamespace(client, "etcd-cert-manager");
    ns = nsObj.name;
    op = await installOperator(client, ns, { watchNamespace: ns });

    // A self-signed Issuer makes the CA; a CA Issuer signs with it.
    const issuer = (issuerName: string, spec: Record<string, unknown>) => ({
      apiVersion: IssuerKind.apiVersion,
      kind: IssuerKind.kind,
      metadata: { name: issuerName, namespace: ns },
      spec,
    });
    // cert-manager's webhook may need a moment after the install: retry the first write.
    await eventually(() => client.create(IssuerKind, issuer("selfsigned", { selfSigned: {} })), {
      timeoutMs: minutes(2),
      intervalMs: 2_000,
      message: "cert-manager's webhook accepts an Issuer",
    });
    await client.create(
      CertificateKind,
      certificate("etcd-ca", "selfsigned", { isCA: true, commonName: "etcd e2e CA", duration: "8760h" }),
    );
    await waitIssued("etcd-ca");
    await client.create(IssuerKind, issuer("etcd-ca", { ca: { secretName: "etcd-ca" } }));

    const issuerRef = { name: "etcd-ca" };
    await client.create(
      EtcdClusterKind,
      etcdCluster(ns, name, {
        tls: { peer: { certManager: { issuerRef } }, client: { certManager: { issuerRef } } },
      }),
    );
  }, minutes(8));

  afterAll(async () => {
    await tearDownSuite(client, { namespace: ns, name }, op, [nsObj]);
    if (installedCertManager) {
      await helm(["uninstall", "cert-manager", "--namespace", "cert-manager", "--wait"]).catch(
        (err: unknown) => console.warn(`uninstalling cert-manager: ${String(err)}`),
      );
    }
  }, minutes(5));

  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => printFailureReport(client, ns, name, op));
  });

  it(
    "becomes Available on cert-manager's certificates; refuses a client without a certificate, serves one with a certificate of the issuer's CA",
    async () => {
      await waitAvailable(client, ns, name, 3, minutes(6));

      // The operator's Certificates: its client's, the backup Jobs', one per member; all Ready.
      const members = (await memberPods(client, ns, name)).map((p) => p.metadata.name ?? "");
      const owned = await client.list(CertificateKind, {
        namespace: ns,
        labelSelector: `${CLUSTER_LABEL}=${name}`,
      });
      expect(owned.items.map((c) => c.metadata.name).sort()).toEqual(
        [
          `${name}-backup-client-tls`,
          `${name}-operator-client-tls`,
          ...members.map((m) => `${m}-tls`),
        ].sort(),
      );
      expect(owned.items.filter((c) => !ready(c)).map((c) => c.metadata.name)).toEqual([]);

      const pods = await memberPods(client, ns, name);
      const endpoint = pods
        .filter((p) => podReady(p) && p.status?.podIP)
        .map((p) => `https://${p.status?.podIP}:2379`)[0];
      if (endpoint === undefined) throw new Error("no ready member");
      // The CA as cert-manager writes it into the Secrets the operator asked for (ca.crt).
      const { ca } = await issuedPair(`${name}-backup-client-tls`);

      // Refused: HTTPS without a client certificate (the server's CA trusted).
      expect(await rangeAnswer(endpoint, { ca })).toMatch(/^refused: /);

      // Served: a client certificate of the test's own, from the same CA Issuer.
      await client.create(
        CertificateKind,
        certificate("e2e-client", "etcd-ca", {
          commonName: "e2e-client",
          usages: ["digital signature", "client auth"],
        }),
      );
      const mine = await waitIssued("e2e-client");
      const etcd = new EtcdClient({ endpoints: [endpoint], tls: mine });
      const { members: listed } = await etcd.memberList();
      expect(listed.map((m) => m.name).sort()).toEqual([...members].sort());
    },
    minutes(10),
  );
});
