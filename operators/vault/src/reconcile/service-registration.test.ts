// The controller and Vault's Kubernetes service registration, against core's in-memory API server: the pods'
// ServiceAccount, Role and RoleBinding exist before the first pod; the -active Service of a new cluster selects
// Vault's vault-active label; a cluster made by an older operator keeps the operator's label until every pod runs
// with registration and Vault has labelled the active one, then switches once (an Event) and never writes again.
import {
  type KubeObject,
  Pod,
  type PodObject,
  Role,
  RoleBinding,
  Service,
  ServiceAccount,
} from "@capstan/core";
import { reconcileOnce } from "@capstan/core/testing";
import { describe, expect, it } from "vitest";
import { VaultClusterKind } from "../api/vault-cluster.ts";
import { STATE_LABEL } from "../desired/names.ts";
import { activeService } from "../desired/objects.ts";
import { cluster, keysSecretWithToken, podObjects, reconcile } from "./test-fixture.ts";

const selector = { "app.kubernetes.io/name": "vault", "app.kubernetes.io/instance": "demo" };

/** A pod of an older operator: no registration environment (its vault never labels it). */
function olderOperatorPod(objects: KubeObject[]): KubeObject[] {
  return objects.map((o) => {
    if (o.kind !== "Pod") return o;
    const p = structuredClone(o) as PodObject;
    for (const c of p.spec?.containers ?? [])
      c.env = (c.env ?? []).filter((e) => !e.name.startsWith("VAULT_K8S_"));
    return p;
  });
}

/** The pod unsealed and Ready, with `labels` added. */
function ready(objects: KubeObject[], labels: Record<string, string>): KubeObject[] {
  return objects.map((o) => {
    if (o.kind !== "Pod") return o;
    const p = structuredClone(o) as PodObject;
    p.metadata.labels = { ...p.metadata.labels, ...labels };
    p.status = {
      phase: "Running",
      podIP: "10.0.0.1",
      conditions: [{ type: "Ready", status: "True", lastTransitionTime: new Date().toISOString() }],
    };
    return p;
  });
}

describe("Vault's service registration", () => {
  it("a new cluster: the pods' ServiceAccount, Role and RoleBinding before the first pod; -active selects vault-active", async () => {
    const run = await reconcileOnce(reconcile([], { initialized: false, sealed: true }), {
      kinds: [VaultClusterKind],
      objects: [cluster(3)],
      request: cluster(3),
    });
    run.expectNoError();
    expect(run.get(ServiceAccount, "demo", "ns")?.automountServiceAccountToken).toBe(false);
    expect(run.get(Role, "demo", "ns")?.rules).toEqual([
      {
        apiGroups: [""],
        resources: ["pods"],
        resourceNames: ["demo-0", "demo-1", "demo-2"],
        verbs: ["get", "patch"],
      },
    ]);
    expect(run.get(RoleBinding, "demo", "ns")?.subjects).toEqual([
      { kind: "ServiceAccount", name: "demo", namespace: "ns" },
    ]);
    expect(run.get(Service, "demo-active", "ns")?.spec?.selector).toEqual({
      ...selector,
      "vault-active": "true",
    });
    expect(run.get(Pod, "demo-0", "ns")?.spec?.serviceAccountName).toBe("demo");
    // A pod naming a ServiceAccount that does not exist is refused: the account comes first.
    const order = run.writes.map((w) => w.kind);
    expect(order.indexOf("ServiceAccount")).toBeLessThan(order.indexOf("Pod"));
    expect(order.indexOf("Role")).toBeLessThan(order.indexOf("Pod"));
  });

  it("an older operator's cluster: the operator's label until every pod registers and Vault labels the active one", async () => {
    const state = { initialized: true, sealed: false };
    const first = await reconcileOnce(reconcile([], { initialized: false, sealed: true }), {
      kinds: [VaultClusterKind],
      objects: [cluster()],
      request: cluster(),
    });
    // What an older operator left: the -active Service on its label, a pod without registration, labelled active.
    const base = first.objects.filter((o) => o.kind !== "Pod" && o.kind !== "Service");
    const older = activeService(cluster(), "operator");
    const oldPod = ready(olderOperatorPod(podObjects(cluster(), 0)), { [STATE_LABEL]: "active" });
    const rolling = await reconcileOnce(reconcile([], state), {
      kinds: [VaultClusterKind],
      objects: [...base, keysSecretWithToken(), older, ...oldPod],
      request: cluster(),
    });
    rolling.expectNoError();
    expect(rolling.get(Service, "demo-active", "ns")?.spec?.selector).toEqual({
      ...selector,
      [STATE_LABEL]: "active",
    });
    expect(rolling.events.map((e) => e.reason)).not.toContain("ActiveServiceFollowsVault");

    // The pod restarted with registration, before Vault labelled it: still the operator's label (the Service
    // would be empty otherwise).
    const others = rolling.objects.filter((o) => o.kind !== "Pod");
    const unlabelled = await reconcileOnce(reconcile([], state), {
      kinds: [VaultClusterKind],
      objects: [...others, ...ready(podObjects(cluster(), 0), { [STATE_LABEL]: "active" })],
      request: cluster(),
    });
    unlabelled.expectNoError();
    expect(unlabelled.get(Service, "demo-active", "ns")?.spec?.selector?.[STATE_LABEL]).toBe("active");

    // Vault labelled it: the Service moves to Vault's label, once, with an Event.
    const vaultLabels = { [STATE_LABEL]: "active", "vault-active": "true", "vault-initialized": "true" };
    const labelled = await reconcileOnce(reconcile([], state), {
      kinds: [VaultClusterKind],
      objects: [...others, ...ready(podObjects(cluster(), 0), vaultLabels)],
      request: cluster(),
    });
    labelled.expectNoError();
    // What the operator applies (the in-memory server merges an apply; the API server drops the key the operator
    // owned and no longer applies).
    const applied = labelled.writesOf(Service).map((w) => w.body as { spec?: { selector?: unknown } });
    expect(applied.map((b) => b.spec?.selector)).toEqual([{ ...selector, "vault-active": "true" }]);
    expect(labelled.events.map((e) => e.reason)).toContain("ActiveServiceFollowsVault");

    // From then on Vault's label, whatever the operator's label says, and no write in the steady state.
    const steady = await reconcileOnce(reconcile([], state), {
      kinds: [VaultClusterKind],
      objects: labelled.objects,
      request: cluster(),
    });
    steady.expectNoError();
    steady.expectNoWrites();
    expect(steady.get(Service, "demo-active", "ns")?.spec?.selector?.["vault-active"]).toBe("true");
  });

  it("the pods' objects refused (the operator's RBAC lags its version): pods as before, the operator's label, Degraded", async () => {
    const forbidden = {
      message:
        'serviceaccounts is forbidden: User "system:serviceaccount:ops:vault-operator" cannot patch resource "serviceaccounts"',
    };
    const refuse = (server: import("@capstan/core/testing").FakeApiServer) => {
      server.fail({ kind: "ServiceAccount", verb: ["apply", "create", "patch"] }, 403, forbidden);
    };
    const first = await reconcileOnce(reconcile([], { initialized: false, sealed: true }), {
      kinds: [VaultClusterKind],
      objects: [cluster()],
      request: cluster(),
      setup: refuse,
    });
    first.expectNoError();
    // No pod naming a ServiceAccount that does not exist (the API server would refuse it): one as before.
    const pod = first.get(Pod, "demo-0", "ns");
    expect(pod?.spec?.serviceAccountName).toBeUndefined();
    expect(pod?.spec?.containers[0]?.env?.some((e) => e.name === "VAULT_K8S_POD_NAME")).toBe(false);
    // And an -active Service that follows the operator's label, which such pods get.
    expect(first.get(Service, "demo-active", "ns")?.spec?.selector?.[STATE_LABEL]).toBe("active");

    // Unsealed and in sync otherwise: Degraded, naming what to grant; the pod is not restarted.
    const state = { initialized: true, sealed: false };
    const running = first.objects.map((o) => {
      if (o.kind !== "Pod") return o;
      const p = structuredClone(o) as PodObject;
      p.status = {
        phase: "Running",
        podIP: "10.0.0.1",
        conditions: [{ type: "Ready", status: "True", lastTransitionTime: new Date().toISOString() }],
      };
      return p;
    });
    const steady = await reconcileOnce(reconcile([], state), {
      kinds: [VaultClusterKind],
      objects: [...running, keysSecretWithToken()],
      request: cluster(),
      setup: refuse,
    });
    steady.expectNoError();
    expect(steady.writesOf(Pod).filter((w) => w.verb === "delete")).toEqual([]);
    const degraded = steady
      .get(VaultClusterKind, "demo", "ns")
      ?.status?.conditions?.find((c) => c.type === "Degraded");
    expect(degraded).toMatchObject({ status: "True", reason: "ServiceRegistrationForbidden" });
    expect(degraded?.message).toMatch(/serviceaccounts, roles and rolebindings/);
  });
});
