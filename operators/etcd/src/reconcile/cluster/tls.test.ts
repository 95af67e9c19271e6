// TLS in the EtcdCluster reconcile, against the in-memory API server and a scripted etcd: the operator's
// certificates issued once and reused, the etcd client given the operator's certificate, pods annotated, a
// near-expiry member certificate renewed, a missing user Secret reported as Degraded, the NetworkPolicy applied.
import {
  certificateInfo,
  createCA,
  issueCertificate,
  type KubeObject,
  NetworkPolicy,
  Pod,
  Secret,
  secretData,
  signedBy,
} from "@capstan/core";
import { describe, expect, it } from "vitest";
import { type EtcdCluster, EtcdClusterKind } from "../../api/etcd-cluster.ts";
import { CERTIFICATES_ANNOTATION, memberHosts, tlsSecret } from "../../desired/tls.ts";
import {
  type EtcdRecord,
  etcdRecord,
  healthyEtcd,
  reconcileCluster,
  runningMembers,
  testCluster,
} from "../test-fixture.ts";

const managed = testCluster({ tls: { peer: {}, client: {} } });

/** One reconcile of `cluster` among `objs`, the operator's pods in ns "ops"; records the etcd clients made. */
async function reconcile(cluster: EtcdCluster, objs: KubeObject[], etcd: EtcdRecord = etcdRecord()) {
  return reconcileCluster(cluster, objs, {
    etcdClient: healthyEtcd(cluster, etcd),
    operatorPods: { namespace: "ops", labels: { "app.kubernetes.io/name": "etcd-operator" } },
  });
}

describe("operator-managed TLS in the reconcile", () => {
  it("issues the CA, the client and member certificates once, and talks to etcd over https with its own", async () => {
    const etcd = etcdRecord();
    const seen = etcd.clients;
    const first = await reconcile(managed, runningMembers(managed), etcd);
    first.expectNoError();
    expect(first.writesOf(Secret).map((w) => `${w.verb} ${w.name}`)).toEqual([
      "create demo-ca",
      "create demo-operator-client-tls",
      "create demo-backup-client-tls",
      "create demo-a-tls",
      "create demo-b-tls",
      "create demo-c-tls",
    ]);
    const ca = secretData(first.get(Secret, "demo-ca", "ns"))["tls.crt"] ?? "";
    const member = secretData(first.get(Secret, "demo-b-tls", "ns"));
    expect(signedBy(member["tls.crt"] ?? "", ca)).toBe(true);
    expect(certificateInfo(member["tls.crt"] ?? "")?.hosts).toEqual(memberHosts(managed, "demo-b"));
    expect(certificateInfo(member["tls.crt"] ?? "")?.commonName).toBe("demo-member");
    expect(seen[0]?.endpoints.every((e) => e.startsWith("https://10.0.0."))).toBe(true);
    expect(seen[0]?.tls?.ca).toBe(ca);
    expect(certificateInfo(seen[0]?.tls?.cert ?? "")?.commonName).toBe("capstan-etcd-operator");
    const annotation = first.get(Pod, "demo-b", "ns")?.metadata.annotations?.[CERTIFICATES_ANNOTATION];
    expect(annotation).toBe(certificateInfo(member["tls.crt"] ?? "")?.fingerprint.slice(0, 16));
    expect(first.events.map((e) => e.reason)).toContain("CertificateIssued");

    const second = await reconcile(managed, first.objects);
    second.expectNoError();
    expect(second.writesOf(Secret)).toEqual([]);
    expect(second.writesOf(Pod)).toEqual([]);
  });

  it("renews a member certificate within renewBefore and re-annotates its pod only", async () => {
    const first = await reconcile(managed, runningMembers(managed));
    const caSecret = first.get(Secret, "demo-ca", "ns");
    const ca = secretData(caSecret);
    const expiring = await issueCertificate(
      { cert: ca["tls.crt"] ?? "", key: ca["tls.key"] ?? "" },
      { hosts: memberHosts(managed, "demo-a"), commonName: "demo-member", validityMs: 3_600_000 },
    );
    const objs = first.objects.map((o) =>
      o.kind === "Secret" && o.metadata.name === "demo-a-tls"
        ? { ...tlsSecret(managed, "demo-a-tls", expiring, ca["ca.crt"] ?? ""), metadata: o.metadata }
        : o,
    );
    const run = await reconcile(managed, objs);
    run.expectNoError();
    expect(run.writesOf(Secret).map((w) => `${w.verb} ${w.name}`)).toEqual(["patch demo-a-tls"]);
    expect(run.writesOf(Pod).map((w) => `${w.verb} ${w.name}`)).toEqual(["patch demo-a"]);
    const renewed = secretData(run.get(Secret, "demo-a-tls", "ns"))["tls.crt"] ?? "";
    expect(certificateInfo(renewed)?.notAfter.getTime()).toBeGreaterThan(Date.now() + 2000 * 3_600_000);
    expect(run.events.find((e) => e.reason === "CertificateRenewed")?.note).toMatch(
      /demo-a-tls.*within renewBefore/,
    );
  });

  it("a missing user Secret: Degraded TLSSecretMissing, and no step taken", async () => {
    const cluster = testCluster({ tls: { client: { secretRef: { name: "mine" } } } });
    const run = await reconcile(cluster, runningMembers(cluster));
    run.expectNoError();
    const status = run.get(EtcdClusterKind, "demo", "ns")?.status;
    const degraded = status?.conditions?.find((c) => c.type === "Degraded");
    expect(degraded).toMatchObject({ status: "True", reason: "TLSSecretMissing" });
    expect(degraded?.message).toMatch(/spec.tls.client.secretRef: Secret ns\/mine does not exist/);
    expect(run.writesOf(Pod)).toEqual([]);
  });

  it("a user Secret: read, never written; the operator's client uses it", async () => {
    const cluster = testCluster({ tls: { client: { secretRef: { name: "mine" } } } });
    const ca = await createCA({ commonName: "user CA" });
    const pair = await issueCertificate(ca, { hosts: ["x"], validityMs: 3_600_000 });
    const user = {
      ...tlsSecret(cluster, "mine", pair, ca.cert),
      metadata: { name: "mine", namespace: "ns" },
    };
    const etcd = etcdRecord();
    const seen = etcd.clients;
    const run = await reconcile(cluster, [...runningMembers(cluster), user], etcd);
    run.expectNoError();
    expect(run.writesOf(Secret)).toEqual([]);
    expect(seen[0]?.tls).toEqual({ ca: ca.cert, ...pair });
  });

  it("applies the NetworkPolicy when spec.network.networkPolicy is on", async () => {
    const cluster = testCluster({ network: { networkPolicy: true } });
    const run = await reconcile(cluster, runningMembers(cluster));
    run.expectNoError();
    const policy = run.get(NetworkPolicy, "demo-etcd", "ns");
    expect(policy?.spec?.ingress?.[1]?.from).toContainEqual({
      podSelector: { matchLabels: { "app.kubernetes.io/name": "etcd-operator" } },
      namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "ops" } },
    });
  });
});
