// cert-manager as the source of the certificates (spec.tls.<peer|client>.certManager), in the EtcdCluster reconcile
// against the in-memory API server (Certificates are unstructured custom resources there) and a scripted etcd. A
// tiny cert-manager (issue()) writes the Secret of each Certificate, signed by a CA, as cert-manager would.
import {
  type CertificatePair,
  certificateInfo,
  createCA,
  issueCertificate,
  type KubeObject,
  PersistentVolumeClaim,
  Pod,
  Secret,
  secretData,
} from "@capstan/core";
import type { ReconcileRun } from "@capstan/core/testing";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { EtcdBackupKind } from "../../api/backup.ts";
import { type EtcdCluster, EtcdClusterKind, type EtcdClusterSpec } from "../../api/etcd-cluster.ts";
import { EtcdRestoreKind } from "../../api/etcd-restore.ts";
import { type Certificate, CertificateKind, NEW_MEMBER_LABEL } from "../../desired/cert-manager.ts";
import { memberPod } from "../../desired/member-pod.ts";
import { peerURL } from "../../desired/names.ts";
import { CERTIFICATES_ANNOTATION, memberHosts } from "../../desired/tls.ts";
import { type EtcdClient, EtcdError } from "../../etcd/etcd-client.ts";
import { EtcdOperatorMetrics } from "../metrics.ts";
import { etcdRecord, healthyEtcd, reconcileCluster, runningMembers, testCluster } from "../test-fixture.ts";
import { etcdClusterController } from "./controller.ts";
import type { EtcdClientFactory } from "./observe.ts";

const issuer = { name: "etcd-ca", kind: "ClusterIssuer" as const, group: "cert-manager.io" };
const bothPorts: Partial<EtcdClusterSpec> = {
  tls: { peer: { certManager: { issuerRef: issuer } }, client: { certManager: { issuerRef: issuer } } },
};

const certificates = (objects: readonly KubeObject[]): Certificate[] =>
  objects.filter((o): o is Certificate => o.kind === "Certificate");

/** cert-manager: a Secret (ca.crt, tls.crt, tls.key, the secretTemplate's labels) for each Certificate without one. */
async function issue(objects: readonly KubeObject[], ca: CertificatePair): Promise<KubeObject[]> {
  const secrets = new Set(objects.filter((o) => o.kind === "Secret").map((o) => o.metadata.name));
  const added: KubeObject[] = [];
  for (const c of certificates(objects)) {
    if (secrets.has(c.spec.secretName)) continue;
    const pair = await issueCertificate(ca, {
      hosts: [...(c.spec.dnsNames ?? []), ...(c.spec.ipAddresses ?? [])],
      commonName: c.spec.commonName,
      validityMs: 3_600_000,
    });
    const b64 = (s: string) => Buffer.from(s).toString("base64");
    added.push({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: c.spec.secretName, namespace: "ns", labels: c.spec.secretTemplate.labels },
      type: "kubernetes.io/tls",
      data: { "ca.crt": b64(ca.cert), "tls.crt": b64(pair.cert), "tls.key": b64(pair.key) },
    } as KubeObject);
  }
  return [...objects, ...added];
}

/** The fixture's members plus the Secrets of the client and member Certificates, issued (the EtcdCluster left out). */
async function issuedCluster(cluster: EtcdCluster, ca: CertificatePair) {
  const first = await reconcileCluster(cluster, runningMembers(cluster));
  first.expectNoError();
  const second = await reconcileCluster(cluster, await issue(first.objects, ca));
  second.expectNoError();
  return (await issue(second.objects, ca)).filter((o) => o.kind !== EtcdClusterKind.kind);
}

/** The fixture's healthy etcd, which also accepts learners (recording their peer URLs in `added`). */
function growingEtcd(cluster: EtcdCluster, added: string[]): EtcdClientFactory {
  const base = healthyEtcd(cluster);
  return (endpoints, tls) =>
    ({
      ...base(endpoints, tls),
      memberAddAsLearner: async (urls: string[]) => void added.push(...urls),
    }) as unknown as EtcdClient;
}

/** "verb name" of each Certificate write. */
const certificateWrites = (run: ReconcileRun): string[] =>
  run.writesOf(CertificateKind).map((w) => `${w.verb} ${w.name}`);

/** The cluster's condition of `type` after the run. */
const conditionAfter = (run: ReconcileRun, type: string) =>
  run.get(EtcdClusterKind, "demo", "ns")?.status?.conditions?.find((c) => c.type === type);

describe("the EtcdCluster controller and cert-manager", () => {
  it("starts no informer on cert-manager's kinds (its CRD may be absent, and an informer on it would never sync)", () => {
    const kinds = etcdClusterController({ metrics: new EtcdOperatorMetrics(new Registry()) }).watchedKinds();
    const groups = [kinds.for, ...kinds.owns, ...kinds.watches].map((k) => k.apiVersion);
    expect(groups.filter((g) => g.startsWith("cert-manager.io/"))).toEqual([]);
  });
});

describe("cert-manager certificates in the reconcile", () => {
  it("requests the client certificates first and waits for the operator's: Progressing, naming the Certificate", async () => {
    const cluster = testCluster(bothPorts);
    const run = await reconcileCluster(cluster, runningMembers(cluster));
    run.expectNoError();
    expect(certificateWrites(run)).toEqual([
      "apply demo-operator-client-tls",
      "apply demo-backup-client-tls",
    ]);
    const operator = run.get(CertificateKind, "demo-operator-client-tls", "ns");
    expect(operator?.spec).toMatchObject({
      secretName: "demo-operator-client-tls",
      issuerRef: issuer,
      commonName: "capstan-etcd-operator",
      usages: ["digital signature", "key encipherment", "client auth"],
    });
    expect(operator?.spec.dnsNames).toBeUndefined();
    expect(operator?.metadata.ownerReferences?.[0]).toMatchObject({ kind: "EtcdCluster", name: "demo" });
    const progressing = conditionAfter(run, "Progressing");
    expect(progressing).toMatchObject({ status: "True", reason: "CertificateNotReady" });
    expect(progressing?.message).toMatch(/Certificate ns\/demo-operator-client-tls/);
    expect(run.writesOf(Pod)).toEqual([]);
    expect(run.writesOf(Secret)).toEqual([]);
  });

  it("makes one Certificate per member with its names, annotates the pods once issued, and writes nothing in steady state", async () => {
    const cluster = testCluster(bothPorts);
    const ca = await createCA({ commonName: "cert-manager test CA" });
    const first = await reconcileCluster(cluster, runningMembers(cluster));
    const second = await reconcileCluster(cluster, await issue(first.objects, ca));
    second.expectNoError();
    expect(certificateWrites(second)).toEqual(["apply demo-a-tls", "apply demo-b-tls", "apply demo-c-tls"]);
    const b = second.get(CertificateKind, "demo-b-tls", "ns");
    expect(b?.spec).toMatchObject({
      secretName: "demo-b-tls",
      issuerRef: issuer,
      commonName: "demo-member",
      usages: ["digital signature", "key encipherment", "server auth", "client auth"],
      ipAddresses: ["127.0.0.1", "::1"],
    });
    expect(b?.spec.dnsNames).toEqual(memberHosts(cluster, "demo-b").filter((h) => !/^[0-9.:]+$/.test(h)));
    expect(b?.spec.dnsNames).toContain("demo-b.demo-peer.ns.svc");
    expect(second.events.map((e) => e.reason)).toContain("CertificateCreated");
    // Not issued yet: the pods carry no fingerprint.
    expect(second.get(Pod, "demo-b", "ns")?.metadata.annotations?.[CERTIFICATES_ANNOTATION] ?? "").toBe("");

    const etcd = etcdRecord();
    const objects = await issue(second.objects, ca);
    const third = await reconcileCluster(cluster, objects, { etcdClient: healthyEtcd(cluster, etcd) });
    third.expectNoError();
    expect(third.writesOf(CertificateKind)).toEqual([]);
    const member = secretData(third.get(Secret, "demo-b-tls", "ns"))["tls.crt"] ?? "";
    expect(third.get(Pod, "demo-b", "ns")?.metadata.annotations?.[CERTIFICATES_ANNOTATION]).toBe(
      certificateInfo(member)?.fingerprint.slice(0, 16),
    );
    // The operator talks to etcd with the certificate cert-manager issued for it.
    const operator = secretData(third.get(Secret, "demo-operator-client-tls", "ns"));
    expect(etcd.clients[0]?.tls).toEqual({
      ca: ca.cert,
      cert: operator["tls.crt"],
      key: operator["tls.key"],
    });
    const available = conditionAfter(third, "Available");
    expect(available?.status).toBe("True");

    const steady = await reconcileCluster(cluster, third.objects);
    steady.expectNoError();
    steady.expectNoWrites();
  });

  it("puts a Certificate back as desired when it drifted", async () => {
    const cluster = testCluster(bothPorts);
    const ca = await createCA({ commonName: "cert-manager test CA" });
    const objects = (await issuedCluster(cluster, ca)).map((o) =>
      o.kind === "Certificate" && o.metadata.name === "demo-a-tls"
        ? { ...o, spec: { ...(o as Certificate).spec, dnsNames: ["elsewhere.example"] } }
        : o,
    );
    const run = await reconcileCluster(cluster, objects);
    run.expectNoError();
    expect(certificateWrites(run)).toEqual(["apply demo-a-tls"]);
    expect(run.get(CertificateKind, "demo-a-tls", "ns")?.spec.dnsNames).toContain("demo-a.demo-peer.ns.svc");
  });

  it("a certificate cert-manager renewed: its member's pod is annotated again, nothing else is written", async () => {
    const cluster = testCluster(bothPorts);
    const ca = await createCA({ commonName: "cert-manager test CA" });
    const settled = await reconcileCluster(cluster, await issuedCluster(cluster, ca));
    settled.expectNoError();
    const before = settled.get(Pod, "demo-a", "ns")?.metadata.annotations?.[CERTIFICATES_ANNOTATION];
    // cert-manager renews demo-a's certificate: a new key and certificate in the same Secret.
    const renewed = await issueCertificate(ca, {
      hosts: memberHosts(cluster, "demo-a"),
      commonName: "demo-member",
      validityMs: 3_600_000,
    });
    const objects = settled.objects
      .filter((o) => o.kind !== EtcdClusterKind.kind)
      .map((o) =>
        o.kind === "Secret" && o.metadata.name === "demo-a-tls"
          ? {
              ...o,
              data: {
                ...(o as unknown as { data: Record<string, string> }).data,
                "tls.crt": Buffer.from(renewed.cert).toString("base64"),
                "tls.key": Buffer.from(renewed.key).toString("base64"),
              },
            }
          : o,
      );
    const run = await reconcileCluster(cluster, objects);
    run.expectNoError();
    expect(run.writesOf(Pod).map((w) => `${w.verb} ${w.name}`)).toEqual(["patch demo-a"]);
    expect([...certificateWrites(run), ...run.writesOf(Secret)]).toEqual([]);
    const after = run.get(Pod, "demo-a", "ns")?.metadata.annotations?.[CERTIFICATES_ANNOTATION];
    expect(after).not.toBe(before);
    expect(after).toBe(certificateInfo(renewed.cert)?.fingerprint.slice(0, 16));
  });

  it("two issuers: each member has a peer and a client certificate, mounted on their ports", async () => {
    const cluster = testCluster({
      tls: {
        peer: { certManager: { issuerRef: { name: "peer-ca" } } },
        client: { certManager: { issuerRef: { name: "client-ca" }, duration: "720h", renewBefore: "240h" } },
      },
    });
    const ca = await createCA({ commonName: "cert-manager test CA" });
    const first = await reconcileCluster(cluster, runningMembers(cluster));
    const second = await reconcileCluster(cluster, await issue(first.objects, ca));
    second.expectNoError();
    const names = certificates(second.objects).map((c) => c.metadata.name);
    expect(names).toEqual(expect.arrayContaining(["demo-a-tls", "demo-a-client-tls"]));
    expect(second.get(CertificateKind, "demo-a-tls", "ns")?.spec.issuerRef).toEqual({
      name: "peer-ca",
      kind: "Issuer",
      group: "cert-manager.io",
    });
    expect(second.get(CertificateKind, "demo-a-client-tls", "ns")?.spec).toMatchObject({
      issuerRef: { name: "client-ca" },
      duration: "720h",
      renewBefore: "240h",
    });
    const pod = memberPod({
      cluster,
      member: "demo-a",
      initialCluster: [{ name: "demo-a", peerURL: peerURL(cluster, "demo-a") }],
      initialClusterState: "existing",
    });
    const secretOf = (volume: string) =>
      pod.spec?.volumes?.find((v) => v.name === volume)?.secret?.secretName;
    expect([secretOf("peer-tls"), secretOf("client-tls")]).toEqual(["demo-a-tls", "demo-a-client-tls"]);
  });

  it("a new member's names are in its certificate before it is added: the learner waits for the Secret", async () => {
    const ca = await createCA({ commonName: "cert-manager test CA" });
    const three = testCluster(bothPorts);
    const objects = await issuedCluster(three, ca);
    const cluster = testCluster({ ...bothPorts, replicas: 4 });
    const added: string[] = [];
    const waiting = await reconcileCluster(cluster, objects, { etcdClient: growingEtcd(cluster, added) });
    waiting.expectNoError();
    expect(added).toEqual([]);
    const fresh = certificates(waiting.objects).filter(
      (c) => c.metadata.labels?.[NEW_MEMBER_LABEL] === "true",
    );
    expect(fresh).toHaveLength(1);
    const name = fresh[0]?.metadata.labels?.["etcd.capstan.dev/member"] ?? "";
    expect(fresh[0]?.spec.dnsNames).toContain(`${name}.demo-peer.ns.svc`);
    const progressing = conditionAfter(waiting, "Progressing");
    expect(progressing).toMatchObject({ status: "True", reason: "CertificateNotReady" });
    expect(progressing?.message).toContain(`Certificate ns/${name}-tls`);

    // Still not issued: the same name waits, no other Certificate is made.
    const again = await reconcileCluster(cluster, waiting.objects, {
      etcdClient: growingEtcd(cluster, added),
    });
    again.expectNoError();
    expect(added).toEqual([]);
    expect(again.writesOf(CertificateKind)).toEqual([]);

    // Issued: the learner is added under that name.
    const issued = await reconcileCluster(cluster, await issue(again.objects, ca), {
      etcdClient: growingEtcd(cluster, added),
    });
    issued.expectNoError();
    expect(added).toEqual([peerURL(cluster, name)]);
  });

  it("a new cluster's seed member is started only once its certificate is issued", async () => {
    const ca = await createCA({ commonName: "cert-manager test CA" });
    const cluster: EtcdCluster = { ...testCluster(bothPorts), status: {} };
    const first = await reconcileCluster(cluster, []);
    const waiting = await reconcileCluster(cluster, await issue(first.objects, ca));
    waiting.expectNoError();
    expect(waiting.writesOf(Pod)).toEqual([]);
    expect(waiting.writesOf(PersistentVolumeClaim)).toEqual([]);
    const seed = certificates(waiting.objects).find((c) => c.metadata.labels?.[NEW_MEMBER_LABEL] === "true");
    const name = seed?.metadata.labels?.["etcd.capstan.dev/member"] ?? "";
    expect(name).toMatch(/^demo-/);

    const started = await reconcileCluster(cluster, await issue(waiting.objects, ca));
    started.expectNoError();
    expect(started.writesOf(Pod).map((w) => `${w.verb} ${w.name}`)).toEqual([`create ${name}`]);
    const annotation = started.get(Pod, name, "ns")?.metadata.annotations?.[CERTIFICATES_ANNOTATION];
    expect(annotation).toMatch(/^[0-9a-f]{16}$/);
  });

  it("cert-manager's API missing: Degraded naming the field, with a Warning Event, and no step", async () => {
    const cluster = testCluster({ tls: { peer: { certManager: { issuerRef: issuer } } } });
    const run = await reconcileCluster(
      cluster,
      runningMembers(cluster),
      {},
      (s) =>
        void s.fail({ kind: "certificates" }, 404, {
          message: "the server could not find the requested resource",
        }),
    );
    run.expectNoError();
    const degraded = conditionAfter(run, "Degraded");
    expect(degraded).toMatchObject({ status: "True", reason: "CertManagerMissing" });
    expect(degraded?.message).toMatch(/^spec\.tls\.peer\.certManager: cert-manager's API/);
    expect(run.events).toContainEqual(
      expect.objectContaining({ type: "Warning", reason: "CertManagerMissing" }),
    );
    expect(run.writesOf(Pod)).toEqual([]);
  });

  it("cert-manager gone under a running cluster with automatic recovery: no recovery from a backup (etcd cannot be asked)", async () => {
    const lost = new Date(Date.now() - 60 * 60_000).toISOString();
    const base = testCluster({
      ...bothPorts,
      recovery: { automatic: { enabled: true, afterSeconds: 600 } },
    });
    const cluster: EtcdCluster = { ...base, status: { ...base.status, quorumLostSince: lost } };
    const backup = {
      apiVersion: EtcdBackupKind.apiVersion,
      kind: EtcdBackupKind.kind,
      metadata: { name: "nightly", namespace: "ns" },
      spec: { clusterName: "demo", destination: { pvc: { claimName: "backups" } } },
      status: { phase: "Succeeded", completionTime: "2026-12-01T00:00:00Z" },
    } as KubeObject;
    // etcd answers only a client with a certificate, as a member with --client-cert-auth does.
    const healthy = healthyEtcd(cluster);
    const refuse = async () => {
      throw new EtcdError("bad certificate", []);
    };
    const etcdClient: EtcdClientFactory = (endpoints, tls) =>
      tls === undefined
        ? (new Proxy({}, { get: () => refuse }) as unknown as EtcdClient)
        : healthy(endpoints, tls);
    const run = await reconcileCluster(
      cluster,
      [...runningMembers(cluster), backup],
      { etcdClient },
      (s) => void s.fail({ kind: "certificates" }, 404),
    );
    run.expectNoError();
    expect(run.writesOf(EtcdRestoreKind)).toEqual([]);
    expect(conditionAfter(run, "Degraded")).toMatchObject({ status: "True", reason: "CertManagerMissing" });
    // The clock is kept as it was: the operator knows nothing new about the quorum.
    expect(run.get(EtcdClusterKind, "demo", "ns")?.status?.quorumLostSince).toBe(lost);
  });

  it("the operator may not manage Certificates: Degraded CertManagerForbidden", async () => {
    const cluster = testCluster(bothPorts);
    const run = await reconcileCluster(
      cluster,
      runningMembers(cluster),
      {},
      (s) => void s.fail({ kind: "certificates" }, 403),
    );
    run.expectNoError();
    const degraded = conditionAfter(run, "Degraded");
    expect(degraded).toMatchObject({ status: "True", reason: "CertManagerForbidden" });
    expect(degraded?.message).toMatch(/^spec\.tls\.peer\.certManager: the operator may not manage/);
  });

  it("deletes the Certificate and Secret of a member that is gone", async () => {
    const cluster = testCluster(bothPorts);
    const ca = await createCA({ commonName: "cert-manager test CA" });
    const objects = (await issuedCluster(cluster, ca)).filter(
      (o) =>
        !(["Pod", "PersistentVolumeClaim"].includes(o.kind ?? "") && o.metadata.name?.startsWith("demo-c")),
    );
    const two = testCluster({ ...bothPorts, replicas: 2 });
    const run = await reconcileCluster(two, objects, {
      etcdClient: healthyEtcd(two, etcdRecord(), ["demo-a", "demo-b"]),
    });
    run.expectNoError();
    expect(certificateWrites(run)).toEqual(["delete demo-c-tls"]);
    expect(run.writesOf(Secret).map((w) => `${w.verb} ${w.name}`)).toEqual(["delete demo-c-tls"]);
  });
});
