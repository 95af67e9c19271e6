// The CA rotation in the EtcdCluster reconcile, against the in-memory API server, a scripted etcd (leadership moves)
// and a tiny kubelet (a created pod becomes ready on the next turn): a rotation asked by annotation runs from start
// to end one step per reconcile, restarting one member at a time; steady state writes nothing; it waits for a
// scale-out; a CA near its end is rotated without being asked.
import {
  certificateInfo,
  createCA,
  type KubeObject,
  Pod,
  Secret,
  secretData,
  signedBy,
  splitPemBundle,
} from "@capstan/core";
import { reconcileOnce } from "@capstan/core/testing";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { type EtcdCluster, EtcdClusterKind, type EtcdClusterSpec } from "../../api/etcd-cluster.ts";
import { memberDataClaim } from "../../desired/cluster-objects.ts";
import { memberPod } from "../../desired/member-pod.ts";
import { peerURL } from "../../desired/names.ts";
import { tlsSecret } from "../../desired/tls.ts";
import {
  NEXT_CA_CERT,
  ROTATE_CA_ANNOTATION,
  ROTATED_FOR_ANNOTATION,
  TRUSTED_CA_ANNOTATION,
} from "../../desired/tls-rotation.ts";
import type { EtcdClient, EtcdMember } from "../../etcd/etcd-client.ts";
import { EtcdOperatorMetrics } from "../metrics.ts";
import { memberStatus } from "../test-fixture.ts";
import { reconcileEtcdCluster } from "./controller.ts";
import { shortFingerprint } from "./tls.ts";

const names = ["demo-a", "demo-b", "demo-c"];
const ipOf = (n: string) => `10.0.0.${names.indexOf(n) + 1}`;

const clusterWith = (
  spec: Partial<EtcdClusterSpec> = {},
  annotations?: Record<string, string>,
): EtcdCluster => ({
  apiVersion: EtcdClusterKind.apiVersion,
  kind: EtcdClusterKind.kind,
  metadata: {
    name: "demo",
    namespace: "ns",
    uid: "u1",
    generation: 1,
    ...(annotations === undefined ? {} : { annotations }),
  },
  spec: {
    replicas: 3,
    version: "3.6.15",
    repository: "r",
    storage: { size: "1Gi" },
    tls: { peer: {}, client: {} },
    ...spec,
  },
  status: { clusterID: "ff", observedGeneration: 1 },
});

/** The kubelet: every pod without a status runs and is ready (the pod just created by the last reconcile). */
function kubelet(objects: KubeObject[]): KubeObject[] {
  return objects.map((o) =>
    o.kind === "Pod" && (o as { status?: unknown }).status === undefined
      ? {
          ...o,
          status: {
            phase: "Running",
            podIP: ipOf(o.metadata.name ?? ""),
            conditions: [{ type: "Ready", status: "True", lastTransitionTime: "2026-12-02T00:00:00Z" }],
          },
        }
      : o,
  );
}

function memberObjects(cluster: EtcdCluster): KubeObject[] {
  const initial = names.map((n) => ({ name: n, peerURL: peerURL(cluster, n) }));
  return kubelet(
    names.flatMap((n) => [
      memberPod({ cluster, member: n, initialCluster: initial, initialClusterState: "existing" }),
      memberDataClaim(cluster, n)!,
    ]),
  );
}

/** A healthy 3-voter etcd whose leadership moves when asked; a member without a pod does not answer. */
function fakeEtcd(cluster: EtcdCluster, state: { leader: string; added?: string[] }) {
  const members: EtcdMember[] = names.map((n, i) => ({
    id: String(101 + i),
    name: n,
    peerURLs: [peerURL(cluster, n)],
    clientURLs: [],
    isLearner: false,
  }));
  const header = { clusterId: "255", memberId: "101", revision: 1, raftTerm: 1 };
  return () =>
    ({
      memberList: async () => ({ header, members }),
      status: async (endpoint: string) => memberStatus(endpoint, header, state.leader),
      health: async (endpoint: string) => ({ endpoint, healthy: true }),
      alarmList: async () => [],
      moveLeader: async (id: string) => {
        state.leader = id;
      },
      memberAddAsLearner: async (peerURLs: string[]) => {
        state.added = [...(state.added ?? []), ...peerURLs];
      },
    }) as unknown as EtcdClient;
}

async function reconcile(
  cluster: EtcdCluster,
  objs: KubeObject[],
  state: { leader: string; added?: string[] } = { leader: "101" },
) {
  const current = (objs.find((o) => o.kind === EtcdClusterKind.kind) as EtcdCluster | undefined) ?? cluster;
  return reconcileOnce(
    (req, ctx) =>
      reconcileEtcdCluster(req, ctx, {
        metrics: new EtcdOperatorMetrics(new Registry()),
        etcdClient: fakeEtcd(current, state),
      }),
    { kinds: [EtcdClusterKind], objects: objs, request: current },
  );
}

/** `objs` with the EtcdCluster's annotations replaced. */
function annotate(objs: KubeObject[], annotations: Record<string, string>): KubeObject[] {
  return objs.map((o) =>
    o.kind === EtcdClusterKind.kind ? { ...o, metadata: { ...o.metadata, annotations } } : o,
  );
}

/** A cluster whose certificates were issued (and pods annotated) by a first reconcile. */
async function issued(cluster = clusterWith()): Promise<KubeObject[]> {
  const first = await reconcile(cluster, [cluster, ...memberObjects(cluster)]);
  first.expectNoError();
  return first.objects;
}

const caOf = (objs: KubeObject[]) =>
  secretData(objs.find((o) => o.kind === "Secret" && o.metadata.name === "demo-ca") as never);

describe("CA rotation in the reconcile", () => {
  it("a rotation asked by annotation: one step per reconcile, one member restarted at a time, the old CA untrusted at the end; then no writes", async () => {
    let objs = await issued();
    const oldCA = caOf(objs)["tls.crt"] ?? "";
    const oldClient = secretData(objs.find((o) => o.metadata.name === "demo-backup-client-tls") as never)[
      "tls.crt"
    ];
    objs = annotate(objs, { [ROTATE_CA_ANNOTATION]: "2026-12-02" });
    const state = { leader: "101" };
    const taken: string[] = [];
    let finished = false;
    for (let i = 0; i < 60 && !finished; i++) {
      const run = await reconcile(clusterWith(), objs, state);
      run.expectNoError();
      for (const e of run.events) {
        if (e.reason.startsWith("CARotation")) taken.push(e.reason);
        if (e.reason === "MoveLeader") taken.push(`MoveLeader ${e.note.match(/to (demo-\w)/)?.[1]}`);
      }
      for (const w of run.writesOf(Pod)) if (w.verb === "delete") taken.push(`restart ${w.name}`);
      // Never two members away at once.
      expect(run.objects.filter((o) => o.kind === "Pod").length).toBeGreaterThanOrEqual(2);
      const progressing = run
        .get(EtcdClusterKind, "demo", "ns")
        ?.status?.conditions?.find((c) => c.type === "Progressing");
      finished = progressing?.reason === "InSync" && taken.includes("CARotationOldCADropped");
      objs = kubelet(run.objects);
    }
    expect(finished).toBe(true);
    expect(taken).toEqual([
      "CARotationStarted",
      "MoveLeader demo-b",
      "restart demo-a",
      "MoveLeader demo-a",
      "restart demo-b",
      "restart demo-c",
      "CARotationSwitched",
      "CARotationOldCADropped",
      "MoveLeader demo-b",
      "restart demo-a",
      "MoveLeader demo-a",
      "restart demo-b",
      "restart demo-c",
    ]);

    const ca = caOf(objs);
    const newCA = ca["tls.crt"] ?? "";
    expect(newCA).not.toBe(oldCA);
    expect(splitPemBundle(ca["ca.crt"] ?? "").map(shortFingerprint)).toEqual([shortFingerprint(newCA)]);
    expect(ca[NEXT_CA_CERT]).toBeUndefined();
    const caSecret = objs.find((o) => o.metadata.name === "demo-ca");
    expect(caSecret?.metadata.annotations?.[ROTATED_FOR_ANNOTATION]).toBe("2026-12-02");
    for (const leaf of [
      ...names.map((n) => `${n}-tls`),
      "demo-operator-client-tls",
      "demo-backup-client-tls",
    ]) {
      const data = secretData(objs.find((o) => o.metadata.name === leaf) as never);
      expect(signedBy(data["tls.crt"] ?? "", newCA), leaf).toBe(true);
      expect(signedBy(data["tls.crt"] ?? "", oldCA), leaf).toBe(false);
      expect(data["ca.crt"], leaf).toBe(ca["ca.crt"]);
    }
    expect(signedBy(oldClient ?? "", ca["ca.crt"] ?? "")).toBe(false);
    for (const pod of objs.filter((o) => o.kind === "Pod")) {
      expect(pod.metadata.annotations?.[TRUSTED_CA_ANNOTATION]).toBe(shortFingerprint(newCA));
    }

    // Served: the same annotation asks for nothing more, and steady state writes nothing.
    const again = await reconcile(clusterWith(), objs, state);
    again.expectNoError();
    again.expectNoWrites();

    // A member pod without the trusted-ca record (made by a disaster recovery): made before the rotation started,
    // it trusts what there was then and is left alone; made since, what it trusts is unknown: restarted once.
    const unrecorded = (created: string) =>
      objs.map((o) =>
        o.kind === "Pod" && o.metadata.name === "demo-c"
          ? {
              ...o,
              metadata: {
                ...o.metadata,
                annotations: Object.fromEntries(
                  Object.entries(o.metadata.annotations ?? {}).filter(([k]) => k !== TRUSTED_CA_ANNOTATION),
                ),
                creationTimestamp: created,
              },
            }
          : o,
      );
    const old = await reconcile(clusterWith(), unrecorded("2020-01-01T00:00:00Z"), state);
    old.expectNoError();
    expect(old.writesOf(Pod).filter((w) => w.verb === "delete")).toEqual([]);
    const recent = await reconcile(clusterWith(), unrecorded(new Date().toISOString()), state);
    recent.expectNoError();
    expect(recent.writesOf(Pod).map((w) => `${w.verb} ${w.name}`)).toContain("delete demo-c");
  });

  it("steady state, no rotation asked: no write", async () => {
    const objs = await issued();
    const run = await reconcile(clusterWith(), objs);
    run.expectNoError();
    run.expectNoWrites();
  });

  it("waits while the cluster is not in sync (a scale-out): the membership step runs, the CA is not touched", async () => {
    const objs = annotate(await issued(), { [ROTATE_CA_ANNOTATION]: "now" }).map((o) =>
      o.kind === EtcdClusterKind.kind ? { ...o, spec: { ...(o as EtcdCluster).spec, replicas: 4 } } : o,
    );
    const state: { leader: string; added?: string[] } = { leader: "101" };
    const run = await reconcile(clusterWith({ replicas: 4 }), objs, state);
    run.expectNoError();
    expect(state.added).toHaveLength(1);
    expect(run.writesOf(Secret)).toEqual([]);
    expect(run.events.map((e) => e.reason)).not.toContain("CARotationStarted");
  });

  it("a CA within its renewal margin is rotated without being asked", async () => {
    const objs = await issued();
    const shortCA = await createCA({ commonName: "demo.ns etcd CA", validityMs: 100 * 24 * 3_600_000 });
    const withShort = objs.map((o) =>
      o.metadata.name === "demo-ca" ? { ...tlsSecret(clusterWith(), "demo-ca", shortCA, shortCA.cert) } : o,
    );
    const run = await reconcile(clusterWith(), withShort);
    run.expectNoError();
    const started = run.events.find((e) => e.reason === "CARotationStarted");
    expect(started?.note).toMatch(/the CA expires at/);
    const ca = caOf(run.objects);
    expect(splitPemBundle(ca["ca.crt"] ?? "")).toHaveLength(2);
    expect(certificateInfo(ca[NEXT_CA_CERT] ?? "")?.notAfter.getTime()).toBeGreaterThan(
      Date.now() + 5 * 365 * 24 * 3_600_000,
    );
    const caSecret = run.objects.find((o) => o.metadata.name === "demo-ca");
    expect(caSecret?.metadata.annotations?.[ROTATED_FOR_ANNOTATION]).toBe("expiry");
  });
});
