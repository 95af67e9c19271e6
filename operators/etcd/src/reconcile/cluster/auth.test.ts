// etcd authentication through whole reconciles against the in-memory API server and a scripted etcd that keeps
// users, roles and the auth switch: the root Secret made (not owned by the cluster), auth turned on step by step,
// steady state writing nothing, a missing or wrong Secret reported as Degraded naming the field, and auth turned off.
import type { KubeObject } from "@capstan/core";
import { Secret } from "@capstan/core";
import { type ReconcileRun, reconcileOnce } from "@capstan/core/testing";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { type EtcdAuth, type EtcdCluster, EtcdClusterKind } from "../../api/etcd-cluster.ts";
import { peerURL } from "../../desired/names.ts";
import {
  EtcdAuthError,
  type EtcdClient,
  type EtcdClientAuth,
  type EtcdMember,
} from "../../etcd/etcd-client.ts";
import { EtcdOperatorMetrics } from "../metrics.ts";
import { MEMBERS, memberStatus, runningMembers, testCluster } from "../test-fixture.ts";
import { reconcileEtcdCluster } from "./controller.ts";

const clusterWith = (auth: EtcdAuth | undefined, status: EtcdCluster["status"] = {}): EtcdCluster => {
  const c = testCluster(auth === undefined ? {} : { auth });
  return { ...c, status: { ...c.status, ...status } };
};

const secret = (name: string, password: string | undefined): KubeObject =>
  ({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace: "ns" },
    data: password === undefined ? {} : { password: Buffer.from(password).toString("base64") },
  }) as KubeObject;

/** A healthy 3-voter etcd with users, roles and the auth switch, as etcd enforces them. */
class FakeAuthEtcd {
  enabled = false;
  readonly users = new Map<string, { password: string; roles: string[] }>();
  /** Calls that change auth, in order, with the user the client authenticates as. */
  readonly calls: string[] = [];

  factory = (_endpoints: string[], _tls?: unknown, auth?: EtcdClientAuth): EtcdClient => {
    const header = { clusterId: "255", memberId: "101", revision: 1, raftTerm: 1 };
    const list: EtcdMember[] = MEMBERS.map((n, i) => ({
      id: String(101 + i),
      name: n,
      peerURLs: [peerURL(clusterWith(undefined), n)],
      clientURLs: [],
      isLearner: false,
    }));
    /** What etcd does with a request while auth is on: refuse it without root's right password. */
    const check = (what: string, needsRoot = false) => {
      if (!this.enabled) return;
      if (auth === undefined) throw new EtcdAuthError("NoCredentials", `${what}: user name is empty`, []);
      const user = this.users.get(auth.username);
      if (user?.password !== auth.password) {
        throw new EtcdAuthError("WrongPassword", `${what}: authentication failed`, []);
      }
      if (needsRoot && !user.roles.includes("root")) throw new Error(`${what}: permission denied`);
    };
    const record = (call: string) => this.calls.push(`${call} as ${auth?.username ?? "anonymous"}`);
    return {
      memberList: async () => {
        check("member list");
        return { header, members: list };
      },
      status: async (endpoint: string) => {
        check("status");
        return memberStatus(endpoint, header);
      },
      health: async (endpoint: string) => ({ endpoint, healthy: true }),
      alarmList: async () => {
        check("alarm list");
        return [];
      },
      authStatus: async () => {
        check("auth status", true);
        return { enabled: this.enabled, authRevision: 1 };
      },
      userRoles: async (name: string) => {
        check("user get", true);
        return this.users.get(name)?.roles.slice();
      },
      userAdd: async (name: string, password: string) => {
        check("user add", true);
        record("userAdd");
        if (this.users.has(name)) throw new Error("etcdserver: user name already exists");
        this.users.set(name, { password, roles: [] });
      },
      userGrantRole: async (name: string, role: string) => {
        check("grant", true);
        record("userGrantRole");
        this.users.get(name)?.roles.push(role);
      },
      userChangePassword: async (name: string, password: string) => {
        check("changepw", true);
        record("userChangePassword");
        const user = this.users.get(name);
        if (user !== undefined) user.password = password;
      },
      authEnable: async () => {
        check("auth enable", true);
        record("authEnable");
        if (!this.users.get("root")?.roles.includes("root")) {
          throw new Error("etcdserver: root user does not exist");
        }
        this.enabled = true;
      },
      authDisable: async () => {
        check("auth disable", true);
        record("authDisable");
        this.enabled = false;
      },
    } as unknown as EtcdClient;
  };
}

const reconcile = (etcd: FakeAuthEtcd, objects: readonly KubeObject[]) =>
  reconcileOnce(
    (req, ctx) =>
      reconcileEtcdCluster(req, ctx, {
        metrics: new EtcdOperatorMetrics(new Registry()),
        etcdClient: etcd.factory,
      }),
    { kinds: [EtcdClusterKind], objects, request: { namespace: "ns", name: "demo" } },
  );

const statusOf = (run: ReconcileRun) => run.get(EtcdClusterKind, "demo", "ns")?.status;
const degraded = (run: ReconcileRun) => statusOf(run)?.conditions?.find((c) => c.type === "Degraded");

describe("etcd authentication in reconcile", () => {
  it("makes the root Secret, turns auth on one step per reconcile, then writes nothing", async () => {
    const etcd = new FakeAuthEtcd();
    const cluster = clusterWith({ enabled: true });
    let run = await reconcile(etcd, [cluster, ...runningMembers(cluster)]);
    run.expectNoError();
    const made = run.get(Secret, "demo-root", "ns");
    expect(made?.metadata.ownerReferences).toBeUndefined();
    const password = Buffer.from(made?.data?.password ?? "", "base64").toString("utf8");
    expect(password.length).toBeGreaterThanOrEqual(24);
    expect(run.events.map((e) => e.reason)).toContain("RootSecretCreated");

    const steps: string[] = [];
    for (let i = 0; i < 6 && statusOf(run)?.auth !== "Enabled"; i++) {
      steps.push(...run.events.filter((e) => e.type === "Normal").map((e) => e.reason));
      run = await reconcile(etcd, run.objects);
      run.expectNoError();
    }
    steps.push(...run.events.filter((e) => e.type === "Normal").map((e) => e.reason));
    expect(steps).toEqual(["RootSecretCreated", "AddRootUser", "GrantRootRole", "EnableAuth"]);
    expect(etcd.calls).toEqual([
      "userAdd as root",
      "userGrantRole as root",
      "userChangePassword as root",
      "authEnable as root",
    ]);
    expect(etcd.users.get("root")).toEqual({ password, roles: ["root"] });
    expect(statusOf(run)?.auth).toBe("Enabled");
    expect(statusOf(run)?.phase).toBe("Running");

    // The secret never leaves the Secret: not in status, not in an event.
    const everything = JSON.stringify([statusOf(run), run.events]);
    expect(everything).not.toContain(password);

    const steady = await reconcile(etcd, run.objects);
    steady.expectNoError();
    steady.expectNoWrites();
  });

  it("resumes after a restart between the steps: root added earlier, role missing", async () => {
    const etcd = new FakeAuthEtcd();
    etcd.users.set("root", { password: "old", roles: [] });
    const cluster = clusterWith({ enabled: true, rootSecretRef: { name: "creds" } });
    const run = await reconcile(etcd, [
      cluster,
      secret("creds", "from-the-secret"),
      ...runningMembers(cluster),
    ]);
    run.expectNoError();
    expect(etcd.calls).toEqual(["userGrantRole as root"]);
    const next = await reconcile(etcd, run.objects);
    next.expectNoError();
    // EnableAuth sets root's password to the Secret's first: the operator can authenticate afterwards.
    expect(etcd.users.get("root")?.password).toBe("from-the-secret");
    expect(etcd.enabled).toBe(true);
  });

  it("a named Secret that is missing: Degraded naming spec.auth.rootSecretRef.name, an Event, nothing done", async () => {
    const etcd = new FakeAuthEtcd();
    const cluster = clusterWith({ enabled: true, rootSecretRef: { name: "creds" } });
    const run = await reconcile(etcd, [cluster, ...runningMembers(cluster)]);
    run.expectNoError();
    expect(degraded(run)).toMatchObject({ status: "True", reason: "RootSecretMissing" });
    expect(degraded(run)?.message).toMatch(/^spec\.auth\.rootSecretRef\.name: Secret ns\/creds not found/);
    expect(run.events).toContainEqual(
      expect.objectContaining({ type: "Warning", reason: "RootSecretMissing" }),
    );
    expect(etcd.calls).toEqual([]);
    expect(run.get(Secret, "creds", "ns")).toBeUndefined();
    // Only the objects every reconcile applies (Services, budget) and status: no member, claim or Secret.
    expect(run.writes.filter((w) => ["Pod", "PersistentVolumeClaim", "Secret"].includes(w.kind))).toEqual([]);
  });

  it("a Secret without a password key: Degraded RootSecretInvalid", async () => {
    const etcd = new FakeAuthEtcd();
    const cluster = clusterWith({ enabled: true, rootSecretRef: { name: "creds" } });
    const run = await reconcile(etcd, [cluster, secret("creds", undefined), ...runningMembers(cluster)]);
    expect(degraded(run)).toMatchObject({ status: "True", reason: "RootSecretInvalid" });
    expect(etcd.calls).toEqual([]);
  });

  it("etcd rejects the Secret's password (e.g. restored from another cluster's backup): Degraded AuthFailed", async () => {
    const etcd = new FakeAuthEtcd();
    etcd.users.set("root", { password: "the-source-clusters", roles: ["root"] });
    etcd.enabled = true;
    const cluster = clusterWith({ enabled: true, rootSecretRef: { name: "creds" } }, { auth: "Enabled" });
    const run = await reconcile(etcd, [cluster, secret("creds", "a-new-one"), ...runningMembers(cluster)]);
    run.expectNoError();
    expect(degraded(run)).toMatchObject({ status: "True", reason: "AuthFailed" });
    expect(degraded(run)?.message).toMatch(/^spec\.auth\.rootSecretRef: etcd rejects the root password/);
    expect(degraded(run)?.message).not.toContain("a-new-one");
    expect(statusOf(run)?.phase).toBe("Degraded");
    expect(run.events).toContainEqual(expect.objectContaining({ type: "Warning", reason: "AuthFailed" }));
    // No member is touched while the operator cannot see etcd.
    expect(run.writes.filter((w) => w.kind === "Pod" || w.kind === "PersistentVolumeClaim")).toEqual([]);
  });

  it("enabled: false on a cluster with auth on: AuthDisable as root, then Disabled", async () => {
    const etcd = new FakeAuthEtcd();
    etcd.users.set("root", { password: "pw", roles: ["root"] });
    etcd.enabled = true;
    const cluster = clusterWith({ enabled: false }, { auth: "Enabled" });
    const run = await reconcile(etcd, [cluster, secret("demo-root", "pw"), ...runningMembers(cluster)]);
    run.expectNoError();
    expect(etcd.calls).toEqual(["authDisable as root"]);
    const next = await reconcile(etcd, run.objects);
    expect(statusOf(next)?.auth).toBe("Disabled");
    // The operator's own Secret is kept: a restore of an older backup (auth on) still needs it.
    expect(next.get(Secret, "demo-root", "ns")).toBeDefined();
  });

  it("spec.auth unset: no Secret is read or made and etcd's auth is not asked", async () => {
    const etcd = new FakeAuthEtcd();
    const cluster = clusterWith(undefined);
    const run = await reconcile(etcd, [cluster, ...runningMembers(cluster)]);
    run.expectNoError();
    expect(run.requests.filter((r) => r.path.includes("/secrets"))).toEqual([]);
    expect(statusOf(run)?.auth).toBeUndefined();
    expect(statusOf(run)?.phase).toBe("Running");
  });
});
