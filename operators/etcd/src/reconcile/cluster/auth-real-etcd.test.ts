// Whole reconciles of an auth cluster against the in-memory API server and a REAL etcd (one member, listening on
// its "pod IP", a loopback address, port 2379): the operator's own clients (observe, act) turn auth on step by
// step with the password of the Secret it made, etcd then refuses anonymous writes and takes root's, and the next
// reconcile writes nothing. Skipped when the etcd binary is missing or the address cannot be bound.
import { createServer } from "node:net";
import type { KubeObject } from "@capstan/core";
import { reconcileOnce } from "@capstan/core/testing";
import { waitFor } from "@capstan/testing";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EtcdCluster, EtcdClusterKind } from "../../api/etcd-cluster.ts";
import { memberDataClaim } from "../../desired/cluster-objects.ts";
import { memberPod } from "../../desired/member-pod.ts";
import { peerURL } from "../../desired/names.ts";
import { EtcdAuthError, EtcdClient } from "../../etcd/etcd-client.ts";
import { haveLocalEtcd, LocalEtcd } from "../../etcd/local-etcd.ts";
import { EtcdOperatorMetrics } from "../metrics.ts";
import { reconcileEtcdCluster } from "./controller.ts";

const IP = "127.66.0.1";

/** True when `ip:port` can be bound (the loopback /8 answers every address on Linux). */
async function bindable(ip: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, ip, () => server.close(() => resolve(true)));
  });
}

const usable = haveLocalEtcd() && (await bindable(IP, 2379)) && (await bindable(IP, 2380));

const cluster: EtcdCluster = {
  apiVersion: EtcdClusterKind.apiVersion,
  kind: EtcdClusterKind.kind,
  metadata: { name: "demo", namespace: "ns", uid: "u1", generation: 1 },
  spec: {
    replicas: 1,
    version: "3.6.16",
    repository: "r",
    storage: { size: "1Gi" },
    auth: { enabled: true },
  },
  status: { observedGeneration: 1 },
};

describe.skipIf(!usable)("etcd auth reconciled against a real etcd", () => {
  let etcd: LocalEtcd;
  const endpoint = `http://${IP}:2379`;

  beforeAll(async () => {
    etcd = await LocalEtcd.create();
    const spec = { name: "demo-a", clientURL: endpoint, peerURL: `http://${IP}:2380` };
    etcd.start(spec, [spec], "new");
    const probe = new EtcdClient({ endpoints: [endpoint] });
    await waitFor(
      "etcd ready",
      async () => ((await probe.health(endpoint)).healthy ? true : undefined),
      60_000,
    );
  }, 90_000);

  afterAll(async () => {
    await etcd?.stop();
  });

  it("turns auth on with the operator's own clients, then writes nothing", async () => {
    const pod = memberPod({
      cluster,
      member: "demo-a",
      initialCluster: [{ name: "demo-a", peerURL: peerURL(cluster, "demo-a") }],
      initialClusterState: "new",
    });
    pod.status = {
      phase: "Running",
      podIP: IP,
      conditions: [{ type: "Ready", status: "True", lastTransitionTime: "2026-12-02T00:00:00Z" }],
    };
    let objects: KubeObject[] = [cluster, pod, memberDataClaim(cluster, "demo-a")!];
    const reasons: string[] = [];
    const reconcile = (objs: readonly KubeObject[]) =>
      reconcileOnce(
        (req, ctx) => reconcileEtcdCluster(req, ctx, { metrics: new EtcdOperatorMetrics(new Registry()) }),
        { kinds: [EtcdClusterKind], objects: objs, request: { namespace: "ns", name: "demo" } },
      );
    let status: EtcdCluster["status"];
    for (let i = 0; i < 8 && status?.auth !== "Enabled"; i++) {
      const run = await reconcile(objects);
      run.expectNoError();
      reasons.push(...run.events.map((e) => e.reason));
      objects = run.objects;
      status = run.get(EtcdClusterKind, "demo", "ns")?.status;
    }
    expect(reasons).toEqual(["RootSecretCreated", "AddRootUser", "GrantRootRole", "EnableAuth"]);
    expect(status?.auth).toBe("Enabled");
    expect(status?.phase).toBe("Running");

    const secret = objects.find((o) => o.kind === "Secret" && o.metadata.name === "demo-root") as
      | { data?: Record<string, string> }
      | undefined;
    const password = Buffer.from(secret?.data?.password ?? "", "base64").toString("utf8");
    expect(password).not.toBe("");
    const anonymous = new EtcdClient({ endpoints: [endpoint] });
    await expect(anonymous.put("k", "v")).rejects.toBeInstanceOf(EtcdAuthError);
    const root = new EtcdClient({ endpoints: [endpoint], auth: { username: "root", password } });
    await root.put("k", "v");
    expect(await root.get("k")).toBe("v");

    const steady = await reconcile(objects);
    steady.expectNoError();
    steady.expectNoWrites();
  }, 60_000);
});
