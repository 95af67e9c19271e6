// Reconciles of the VaultCluster controller against core's in-memory API server and a scripted Vault: the wiring
// around the planner (a lost init answer never followed by a second init, the steady state writes nothing, pods
// labelled from their health). Init and its keys: keys.test.ts.

import { type KubeObject, PersistentVolumeClaim, Pod, Secret } from "@capstan/core";
import { reconcileOnce } from "@capstan/core/testing";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { VaultClusterKind } from "../api/vault-cluster.ts";
import { STATE_LABEL, tlsHosts } from "../desired/names.ts";
import {
  CERTIFICATE_ANNOTATION,
  CLUSTER_ID_ANNOTATION,
  INIT_STARTED_ANNOTATION,
  tlsSecret,
  type vaultPod,
} from "../desired/objects.ts";
import { certificateInfo, issueServerCertificate } from "../desired/tls.ts";
import { VaultError } from "../vault/vault-client.ts";
import { vaultClusterController } from "./controller.ts";
import { VaultOperatorMetrics } from "./metrics.ts";
import { cluster, keysSecretWithToken, noKeys, podObjects, reconcile } from "./test-fixture.ts";

describe("vaultClusterController", () => {
  it("applies as capstan-vault-operator, the name in users' managedFields since the first release", () => {
    const c = vaultClusterController({ metrics: new VaultOperatorMetrics(new Registry()), keys: noKeys() });
    expect(c.fieldManager).toBe("capstan-vault-operator");
  });
});

describe("reconcileVaultCluster", () => {
  it("first reconcile: TLS Secrets, Services, ConfigMap, then pod 0 and its claim", async () => {
    const calls: string[] = [];
    const run = await reconcileOnce(reconcile(calls, { initialized: false, sealed: true }), {
      kinds: [VaultClusterKind],
      objects: [cluster()],
      request: cluster(),
    });
    run.expectNoError();
    expect(run.get(Secret, "demo-ca", "ns")).toBeDefined();
    expect(run.get(Secret, "demo-tls", "ns")?.type).toBe("kubernetes.io/tls");
    expect(run.get(Pod, "demo-0", "ns")).toBeDefined();
    expect(run.get(PersistentVolumeClaim, "data-demo-0", "ns")).toBeDefined();
    expect(run.events.map((e) => e.reason)).toEqual(["CertificateIssued", "CreatePod"]);
    expect(calls).toEqual([]);
  });

  it("a renewed certificate is stamped on every pod at once (the kubelet then refreshes the Secret), and only once", async () => {
    const calls: string[] = [];
    const state = { initialized: true, sealed: true };
    const fingerprint = (objects: readonly KubeObject[]) => {
      const tls = objects.find((o) => o.kind === "Secret" && o.metadata.name === "demo-tls") as
        | { data?: Record<string, string> }
        | undefined;
      return certificateInfo(Buffer.from(tls?.data?.["tls.crt"] ?? "", "base64").toString())?.fingerprint;
    };
    const first = await reconcileOnce(reconcile(calls, state), {
      kinds: [VaultClusterKind],
      objects: [cluster()],
      request: cluster(),
    });
    first.expectNoError();
    const issued = fingerprint(first.objects);
    expect(issued).toMatch(/^[0-9a-f]{64}$/);
    // A pod is created carrying the certificate it will serve: no patch needed after it.
    expect(first.get(Pod, "demo-0", "ns")?.metadata.annotations?.[CERTIFICATE_ANNOTATION]).toBe(issued);

    // Two running pods serving a certificate a day from expiry (within renewBefore, 720h): it is renewed.
    const secretText = (name: string, key: string) => {
      const o = first.objects.find((x) => x.kind === "Secret" && x.metadata.name === name) as
        | { data?: Record<string, string> }
        | undefined;
      return Buffer.from(o?.data?.[key] ?? "", "base64").toString();
    };
    const ca = { cert: secretText("demo-ca", "tls.crt"), key: secretText("demo-ca", "tls.key") };
    const hour = 3_600_000;
    const old = await issueServerCertificate(
      ca,
      tlsHosts(cluster(2)),
      new Date(Date.now() - 2159 * hour),
      2160 * hour,
    );
    const expiring = certificateInfo(old.cert)?.fingerprint;
    const running = [...podObjects(cluster(2), 0), ...podObjects(cluster(2), 1)].map((o) => {
      if (o.kind === "Pod")
        o.metadata.annotations = { ...o.metadata.annotations, [CERTIFICATE_ANNOTATION]: expiring! };
      return o;
    });
    const kept = first.objects.filter(
      (o) => !["Pod", "PersistentVolumeClaim"].includes(o.kind ?? "") && o.metadata.name !== "demo-tls",
    );
    const renewed = await reconcileOnce(reconcile(calls, state), {
      kinds: [VaultClusterKind],
      objects: [...kept, tlsSecret(cluster(2), "demo-tls", old, ca.cert), ...running],
      request: cluster(2),
    });
    renewed.expectNoError();
    expect(renewed.events.map((e) => e.reason)).toContain("CertificateRenewed");
    const now = fingerprint(renewed.objects);
    expect(now).not.toBe(expiring);
    for (const pod of ["demo-0", "demo-1"]) {
      expect(renewed.get(Pod, pod, "ns")?.metadata.annotations?.[CERTIFICATE_ANNOTATION], pod).toBe(now);
    }

    // The same certificate again: the pods are not written.
    const again = await reconcileOnce(reconcile(calls, state), {
      kinds: [VaultClusterKind],
      objects: renewed.objects,
      request: cluster(2),
    });
    again.expectNoError();
    expect(again.writes.filter((w) => w.kind === "Pod")).toEqual([]);
  });

  it("a lost init answer: never a second init, Degraded with the remediation", async () => {
    const calls: string[] = [];
    const first = await reconcileOnce(reconcile(calls, { initialized: false, sealed: true }), {
      kinds: [VaultClusterKind],
      objects: [cluster()],
      request: cluster(),
    });
    const [pod0, claim0] = podObjects(cluster(), 0);
    claim0!.metadata.annotations = {
      [INIT_STARTED_ANNOTATION]: new Date(Date.now() - 600_000).toISOString(),
    };
    const run = await reconcileOnce(reconcile(calls, { initialized: true, sealed: true }), {
      kinds: [VaultClusterKind],
      objects: [
        ...first.objects.filter((o) => o.kind !== "Pod" && o.kind !== "PersistentVolumeClaim"),
        pod0!,
        claim0!,
      ],
      request: cluster(),
    });
    run.expectNoError();
    expect(calls).toEqual([]);
    const status = run.get(VaultClusterKind, "demo", "ns")?.status;
    expect(status?.phase).toBe("Degraded");
    expect(status?.conditions?.find((c) => c.type === "Degraded")).toMatchObject({
      status: "True",
      reason: "InitResponseLost",
    });
    expect(run.events.map((e) => e.reason)).toContain("InitResponseLost");
  });

  it("after init: unseal, label the pod, record the cluster_id; then the steady state writes nothing", async () => {
    const calls: string[] = [];
    const state = { initialized: false, sealed: true };
    let objects = (
      await reconcileOnce(reconcile(calls, state), {
        kinds: [VaultClusterKind],
        objects: [cluster()],
        request: cluster(),
      })
    ).objects;
    objects = [...objects.filter((o) => o.kind !== "Pod"), ...podObjects(cluster(), 0)];
    // init, unseal, token bootstrap would need more fakes: start from initialized keys with an operator token.
    const keys: KubeObject = keysSecretWithToken();
    state.initialized = true;
    const unseal = await reconcileOnce(reconcile(calls, state), {
      kinds: [VaultClusterKind],
      objects: [...objects, keys],
      request: cluster(),
    });
    unseal.expectNoError();
    expect(calls).toEqual(["unseal 2"]);
    expect(unseal.get(Pod, "demo-0", "ns")?.metadata.labels?.[STATE_LABEL]).toBe("sealed");

    // Vault is now unsealed and active: labelled active, cluster_id recorded beside the keys, in sync.
    const pods = unseal.objects.map((o) => {
      if (o.kind !== "Pod") return o;
      const p = structuredClone(o) as ReturnType<typeof vaultPod>;
      p.status = { phase: "Running", podIP: "10.0.0.1", conditions: [{ type: "Ready", status: "True" }] };
      return p;
    });
    const next = await reconcileOnce(reconcile(calls, state), {
      kinds: [VaultClusterKind],
      objects: pods,
      request: cluster(),
    });
    next.expectNoError();
    expect(next.get(Pod, "demo-0", "ns")?.metadata.labels?.[STATE_LABEL]).toBe("active");
    expect(next.get(Secret, "demo-unseal-keys", "ns")?.metadata.annotations?.[CLUSTER_ID_ANNOTATION]).toBe(
      "cid-1",
    );
    const status = next.get(VaultClusterKind, "demo", "ns")?.status;
    expect(status).toMatchObject({
      phase: "Running",
      active: "demo-0",
      clusterID: "cid-1",
      readyReplicas: 1,
    });
    expect(status?.raftPeers).toEqual([
      { nodeID: "demo-0", address: "demo-0:8201", voter: true, leader: true },
    ]);

    const steady = await reconcileOnce(reconcile(calls, state), {
      kinds: [VaultClusterKind],
      objects: next.objects,
      request: cluster(),
    });
    steady.expectNoError();
    steady.expectNoWrites();
    expect(steady.result).toEqual({ requeueAfter: 15_000 });
  });

  it.each([
    [
      "Vault refuses a key",
      {
        unsealWith: async () => {
          throw new VaultError("/v1/sys/unseal", 400, ["Unseal failed, invalid key"]);
        },
      },
      "UnsealKeysInvalid",
      /demo-0 refuses the unseal keys .*HTTP 400: Unseal failed, invalid key.*holds 2 keys and 2 are needed/,
    ],
    [
      "every key taken and still sealed (duplicates)",
      { unsealWith: async () => ({ sealed: true, t: 2, n: 3, progress: 1 }) },
      "UnsealKeysInvalid",
      /duplicates or belong to another cluster/,
    ],
    [
      "Vault's seal-status asks for more keys than the Secret holds (spec says 2, Vault 3): no unseal tried",
      { sealStatus: async () => ({ sealed: true, initialized: true, t: 3, n: 5, progress: 0 }) },
      "UnsealKeysInsufficient",
      /demo-0 is sealed and needs 3 unseal keys but the keys Secret holds 2/,
    ],
  ])(
    "%s: Degraded naming the pod, one Warning, no UnsealFailed wait",
    async (_, override, reason, message) => {
      const calls: string[] = [];
      const state = { initialized: false, sealed: true };
      const first = await reconcileOnce(reconcile(calls, state), {
        kinds: [VaultClusterKind],
        objects: [cluster()],
        request: cluster(),
      });
      const objects = [...first.objects.filter((o) => o.kind !== "Pod"), ...podObjects(cluster(), 0)];
      const keys: KubeObject = keysSecretWithToken();
      state.initialized = true;
      const run = await reconcileOnce(reconcile(calls, state, undefined, undefined, override), {
        kinds: [VaultClusterKind],
        objects: [...objects, keys],
        request: cluster(),
      });
      run.expectNoError();
      const conditions = run.get(VaultClusterKind, "demo", "ns")?.status?.conditions ?? [];
      const degraded = conditions.find((c) => c.type === "Degraded");
      expect(degraded).toMatchObject({ status: "True", reason });
      expect(degraded?.message).toMatch(message);
      expect(conditions.find((c) => c.type === "Progressing")).toMatchObject({ status: "False", reason });
      expect(run.get(VaultClusterKind, "demo", "ns")?.status?.phase).toBe("Degraded");
      expect(run.events.filter((e) => e.type === "Warning").map((e) => e.reason)).toEqual([reason]);
      expect(run.result).toEqual({ requeueAfter: 30_000 });
      expect(calls).not.toContain("unseal 2");
    },
  );
});
