// Certificates close to expiry, in the EtcdCluster reconcile against the in-memory API server and a scripted etcd:
// a user's Secret (secretRef) or a cert-manager Secret near its notAfter sets CertificatesValid False with a
// Warning Event once, and the notAfter of every certificate in use is exported; a steady-state reconcile writes
// nothing, and no Secret is read more than before.
import { type CertificatePair, createCA, issueCertificate, type KubeObject, Secret } from "@capstan/core";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { type EtcdCluster, EtcdClusterKind } from "../../api/etcd-cluster.ts";
import { CertificateKind } from "../../desired/cert-manager.ts";
import { tlsSecret } from "../../desired/tls.ts";
import { EtcdOperatorMetrics } from "../metrics.ts";
import { reconcileCluster, runningMembers, testCluster } from "../test-fixture.ts";

const DAY = 86_400_000;
const FAMILY = "capstan_etcd_certificate_expiry_timestamp_seconds";

/** A certificate for `hosts` signed by `ca`, valid from `fromDays` ago for `days` days. */
async function leaf(
  ca: CertificatePair,
  fromDays: number,
  days: number,
  hosts = ["x"],
): Promise<CertificatePair> {
  return issueCertificate(ca, { hosts, now: new Date(Date.now() - fromDays * DAY), validityMs: days * DAY });
}

/** The user's Secret ns/mine holding `pair`, signed by `ca`. */
function userSecret(cluster: EtcdCluster, pair: CertificatePair, ca: CertificatePair): KubeObject {
  return { ...tlsSecret(cluster, "mine", pair, ca.cert), metadata: { name: "mine", namespace: "ns" } };
}

/** One reconcile of `cluster` with the user's Secret ns/mine valid from `fromDays` ago for `days` days. */
async function withUserCertificate(cluster: EtcdCluster, fromDays: number, days: number) {
  const ca = await createCA({ commonName: "user CA" });
  const run = await reconcileCluster(cluster, [
    ...runningMembers(cluster),
    userSecret(cluster, await leaf(ca, fromDays, days), ca),
  ]);
  return { run, ca };
}

const condition = (objs: {
  get: (k: typeof EtcdClusterKind, n: string, ns: string) => EtcdCluster | undefined;
}) =>
  objs.get(EtcdClusterKind, "demo", "ns")?.status?.conditions?.find((c) => c.type === "CertificatesValid");

describe("certificates close to expiry", () => {
  it("a user certificate expiring in 3 days: CertificatesValid False, one Warning Event, the gauge; then no write", async () => {
    const cluster = testCluster({ tls: { client: { secretRef: { name: "mine" } } } });
    const ca = await createCA({ commonName: "user CA" });
    const pair = await leaf(ca, 27, 30);
    const registry = new Registry();
    const metrics = new EtcdOperatorMetrics(registry);
    const first = await reconcileCluster(
      cluster,
      [...runningMembers(cluster), userSecret(cluster, pair, ca)],
      {
        metrics,
      },
    );
    first.expectNoError();
    const c = condition(first);
    expect(c).toMatchObject({ status: "False", reason: "CertificateExpiring", observedGeneration: 1 });
    expect(c?.message).toMatch(
      /^the certificate in Secret ns\/mine, key tls.crt \(spec.tls.client.secretRef\) expires at \d{4}-.*Z: the operator does not renew it: put a renewed certificate into Secret ns\/mine/,
    );
    const warnings = first.events.filter((e) => e.type === "Warning");
    expect(warnings.map((e) => [e.reason, e.note])).toEqual([["CertificateExpiring", c?.message]]);
    // Degraded keeps its own meaning: nothing is wrong with the cluster yet.
    const degraded = first
      .get(EtcdClusterKind, "demo", "ns")
      ?.status?.conditions?.find((x) => x.type === "Degraded");
    expect(degraded?.status).toBe("False");
    const text = await registry.getSingleMetricAsString(FAMILY);
    const notAfter = Math.floor(new Date(new Date(Date.now() + 3 * DAY).toISOString()).getTime() / 1000);
    const line = new RegExp(
      `^${FAMILY}\\{object_namespace="ns",object_name="demo",secret="mine",key="tls.crt",source="secretRef"\\} (\\d+)$`,
      "m",
    );
    expect(Math.abs(Number(line.exec(text)?.[1]) - notAfter)).toBeLessThan(300);
    expect(text).toMatch(/secret="mine",key="ca.crt",source="secretRef"/);
    // The Secret is read once, as before: the judgement uses what prepareTLS read.
    expect(first.requests.filter((r) => r.kind === "Secret").length).toBe(1);

    const second = await reconcileCluster(cluster, first.objects, { metrics });
    second.expectNoError();
    second.expectNoWrites();
    expect(second.events).toEqual([]);
  });

  it("renewed: CertificatesValid True again, with a Normal Event", async () => {
    const cluster = testCluster({ tls: { client: { secretRef: { name: "mine" } } } });
    const { run: first, ca } = await withUserCertificate(cluster, 27, 30);
    const renewed = userSecret(cluster, await leaf(ca, 0, 365), ca);
    const objs = first.objects.map((o) => (o.kind === "Secret" && o.metadata.name === "mine" ? renewed : o));
    const second = await reconcileCluster(cluster, objs);
    second.expectNoError();
    expect(condition(second)).toMatchObject({ status: "True", reason: "CertificatesValid" });
    expect(second.events.map((e) => `${e.type} ${e.reason}`)).toEqual(["Normal CertificatesRenewed"]);
  });

  it("an expired user certificate: CertificateExpired", async () => {
    const cluster = testCluster({ tls: { peer: { secretRef: { name: "mine" } } } });
    const { run } = await withUserCertificate(cluster, 31, 30);
    run.expectNoError();
    expect(condition(run)).toMatchObject({ status: "False", reason: "CertificateExpired" });
    expect(condition(run)?.message).toMatch(/key tls.crt \(spec.tls.peer.secretRef\) expired at/);
    expect(run.events.filter((e) => e.type === "Warning").map((e) => e.reason)).toEqual([
      "CertificateExpired",
    ]);
  });

  it("a cert-manager certificate not renewed: names its Certificate and issuer; the gauge has each Secret", async () => {
    const issuer = { name: "etcd-ca", kind: "ClusterIssuer" as const, group: "cert-manager.io" };
    const cluster = testCluster({ tls: { client: { certManager: { issuerRef: issuer } } } });
    const ca = await createCA({ commonName: "issuer CA" });
    /** cert-manager: the Secret of each Certificate, as it writes it. */
    const issue = async (
      objects: readonly KubeObject[],
      pairOf: (name: string) => Promise<CertificatePair>,
    ) => {
      const out: KubeObject[] = [];
      for (const o of objects) {
        if (
          o.kind !== CertificateKind.kind ||
          objects.some((s) => s.kind === "Secret" && s.metadata.name === o.metadata.name)
        )
          continue;
        const name = o.metadata.name ?? "";
        out.push({
          ...tlsSecret(cluster, name, await pairOf(name), ca.cert),
          metadata: { name, namespace: "ns" },
        });
      }
      return [...objects, ...out];
    };
    const fresh = (_: string) => leaf(ca, 0, 90);
    let objs: KubeObject[] = runningMembers(cluster);
    for (let i = 0; i < 2; i++) {
      const run = await reconcileCluster(cluster, objs);
      run.expectNoError();
      objs = await issue(
        run.objects.filter((o) => o.kind !== EtcdClusterKind.kind),
        fresh,
      );
    }
    // The operator's client certificate, 80 days into 90: cert-manager (renewing at 30 days left) has failed.
    objs = objs.filter((o) => !(o.kind === "Secret" && o.metadata.name === "demo-operator-client-tls"));
    objs = await issue(objs, (name) =>
      name === "demo-operator-client-tls" ? leaf(ca, 80, 90) : fresh(name),
    );
    const registry = new Registry();
    const run = await reconcileCluster(cluster, objs, { metrics: new EtcdOperatorMetrics(registry) });
    run.expectNoError();
    expect(condition(run)).toMatchObject({ status: "False", reason: "CertificateExpiring" });
    expect(condition(run)?.message).toMatch(
      /^the certificate in Secret ns\/demo-operator-client-tls, key tls.crt \(spec.tls.client.certManager\) expires at .*: cert-manager has not renewed it: check Certificate ns\/demo-operator-client-tls \(kubectl describe certificate\) and ClusterIssuer etcd-ca$/,
    );
    const text = await registry.getSingleMetricAsString(FAMILY);
    for (const secret of ["demo-operator-client-tls", "demo-backup-client-tls", "demo-a-tls", "demo-c-tls"])
      expect(text).toContain(`secret="${secret}",key="tls.crt",source="certManager"`);
  });

  it("operator-managed certificates: exported, and valid", async () => {
    const cluster = testCluster({ tls: { peer: {}, client: {} } });
    const registry = new Registry();
    const metrics = new EtcdOperatorMetrics(registry);
    const first = await reconcileCluster(cluster, runningMembers(cluster), { metrics });
    first.expectNoError();
    expect(condition(first)).toMatchObject({ status: "True", reason: "CertificatesValid" });
    const text = await registry.getSingleMetricAsString(FAMILY);
    for (const secret of ["demo-ca", "demo-operator-client-tls", "demo-backup-client-tls", "demo-b-tls"])
      expect(text).toContain(`secret="${secret}",key="tls.crt",source="operatorManaged"`);
    expect(first.events.filter((e) => e.type === "Warning")).toEqual([]);
    const second = await reconcileCluster(cluster, first.objects, { metrics });
    second.expectNoWrites();
  });

  it("without TLS: no condition and no series", async () => {
    const cluster = testCluster();
    const registry = new Registry();
    const run = await reconcileCluster(cluster, runningMembers(cluster), {
      metrics: new EtcdOperatorMetrics(registry),
    });
    run.expectNoError();
    expect(condition(run)).toBeUndefined();
    expect(await registry.getSingleMetricAsString(FAMILY)).not.toContain("object_name=");
    expect(run.writesOf(Secret)).toEqual([]);
  });
});
