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
  signedBy,
} from "@capstan/core";
import { reconcileOnce } from "@capstan/core/testing";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { type EtcdCluster, EtcdClusterKind, type EtcdClusterSpec } from "../api/etcd-cluster.ts";
import { memberDataClaim } from "../desired/cluster-objects.ts";
import { memberPod } from "../desired/member-pod.ts";
import { peerURL } from "../desired/names.ts";
import { CERTIFICATES_ANNOTATION, memberHosts, tlsSecret } from "../desired/tls.ts";
import type { EtcdClient, EtcdClientTLS, EtcdMember } from "../etcd/etcd-client.ts";
import { reconcileEtcdCluster } from "./controller.ts";
import { EtcdOperatorMetrics } from "./metrics.ts";
import { secretData } from "./tls.ts";

const names = ["demo-a", "demo-b", "demo-c"];

const clusterWith = (spec: Partial<EtcdClusterSpec>): EtcdCluster => ({
  apiVersion: EtcdClusterKind.apiVersion,
  kind: EtcdClusterKind.kind,
  metadata: { name: "demo", namespace: "ns", uid: "u1", generation: 1 },
  spec: { replicas: 3, version: "3.6.15", repository: "r", storage: { size: "1Gi" }, ...spec },
  status: { clusterID: "ff", observedGeneration: 1 },
});
const managed = clusterWith({ tls: { peer: {}, client: {} } });

function objects(cluster: EtcdCluster): KubeObject[] {
  const initial = names.map((n) => ({ name: n, peerURL: peerURL(cluster, n) }));
  return names.flatMap((n, i) => {
    const pod = memberPod({ cluster, member: n, initialCluster: initial, initialClusterState: "existing" });
    pod.status = {
      phase: "Running",
      podIP: `10.0.0.${i + 1}`,
      conditions: [{ type: "Ready", status: "True", lastTransitionTime: "2026-11-30T00:00:00Z" }],
    };
    return [pod, memberDataClaim(cluster, n)!];
  });
}

/** A healthy 3-voter etcd; records the endpoints and TLS each client was made with. */
function fakeEtcd(cluster: EtcdCluster, seen: { endpoints: string[]; tls: EtcdClientTLS | undefined }[]) {
  const members: EtcdMember[] = names.map((n, i) => ({
    id: String(101 + i),
    name: n,
    peerURLs: [peerURL(cluster, n)],
    clientURLs: [],
    isLearner: false,
  }));
  const header = { clusterId: "255", memberId: "101", revision: 1, raftTerm: 1 };
  return (endpoints: string[], tls?: EtcdClientTLS) => {
    seen.push({ endpoints, tls });
    return {
      memberList: async () => ({ header, members }),
      status: async (endpoint: string) => ({
        endpoint,
        header,
        memberId: "0",
        leader: "101",
        version: "3.6.15",
        dbSize: 1,
        dbSizeInUse: 1,
        raftIndex: 100,
        raftTerm: 1,
        raftAppliedIndex: 100,
        isLearner: false,
        errors: [],
      }),
      health: async (endpoint: string) => ({ endpoint, healthy: true }),
      alarmList: async () => [],
    } as unknown as EtcdClient;
  };
}

async function reconcile(
  cluster: EtcdCluster,
  objs: KubeObject[],
  seen: Parameters<typeof fakeEtcd>[1] = [],
) {
  return reconcileOnce(
    (req, ctx) =>
      reconcileEtcdCluster(req, ctx, {
        metrics: new EtcdOperatorMetrics(new Registry()),
        etcdClient: fakeEtcd(cluster, seen),
        operatorPods: { namespace: "ops", labels: { "app.kubernetes.io/name": "etcd-operator" } },
      }),
    { kinds: [EtcdClusterKind], objects: [cluster, ...objs], request: cluster },
  );
}

describe("operator-managed TLS in the reconcile", () => {
  it("issues the CA, the client and member certificates once, and talks to etcd over https with its own", async () => {
    const seen: Parameters<typeof fakeEtcd>[1] = [];
    const first = await reconcile(managed, objects(managed), seen);
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
    const first = await reconcile(managed, objects(managed));
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
    const cluster = clusterWith({ tls: { client: { secretRef: { name: "mine" } } } });
    const run = await reconcile(cluster, objects(cluster));
    run.expectNoError();
    const status = run.get(EtcdClusterKind, "demo", "ns")?.status;
    const degraded = status?.conditions?.find((c) => c.type === "Degraded");
    expect(degraded).toMatchObject({ status: "True", reason: "TLSSecretMissing" });
    expect(degraded?.message).toMatch(/spec.tls.client.secretRef: Secret ns\/mine does not exist/);
    expect(run.writesOf(Pod)).toEqual([]);
  });

  it("a user Secret: read, never written; the operator's client uses it", async () => {
    const cluster = clusterWith({ tls: { client: { secretRef: { name: "mine" } } } });
    const ca = await createCA({ commonName: "user CA" });
    const pair = await issueCertificate(ca, { hosts: ["x"], validityMs: 3_600_000 });
    const user = {
      ...tlsSecret(cluster, "mine", pair, ca.cert),
      metadata: { name: "mine", namespace: "ns" },
    };
    const seen: Parameters<typeof fakeEtcd>[1] = [];
    const run = await reconcile(cluster, [...objects(cluster), user], seen);
    run.expectNoError();
    expect(run.writesOf(Secret)).toEqual([]);
    expect(seen[0]?.tls).toEqual({ ca: ca.cert, ...pair });
  });

  it("applies the NetworkPolicy when spec.network.networkPolicy is on", async () => {
    const cluster = clusterWith({ network: { networkPolicy: true } });
    const run = await reconcile(cluster, objects(cluster));
    run.expectNoError();
    const policy = run.get(NetworkPolicy, "demo-etcd", "ns");
    expect(policy?.spec?.ingress?.[1]?.from).toContainEqual({
      podSelector: { matchLabels: { "app.kubernetes.io/name": "etcd-operator" } },
      namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "ops" } },
    });
  });
});
