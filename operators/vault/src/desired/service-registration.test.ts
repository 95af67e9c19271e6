// Vault's Kubernetes service registration in what the operator builds: the config stanza, the pods' environment,
// ServiceAccount and token volume (vault container only), the least-privilege Role, the `-active` Service's selector,
// and the choice of selector while the pods of an older operator are rolled onto registration.
import { type PodObject, stableHash } from "@capstan/core";
import { describe, expect, it } from "vitest";
import type { VaultCluster } from "../api/vault-cluster.ts";
import { STATE_LABEL } from "./names.ts";
import {
  activeService,
  configMap,
  POD_BUILDER_VERSION,
  podTemplateHash,
  RELOADER_SCRIPT,
  vaultConfig,
  vaultPod,
} from "./objects.ts";
import {
  chooseActiveSelector,
  liveActiveSelector,
  podRegisters,
  registrationPodNames,
  registrationRole,
  registrationRoleBinding,
  serviceAccount,
} from "./service-registration.ts";

const cluster = (replicas = 3): VaultCluster => ({
  apiVersion: "vault.capstan.dev/v1alpha1",
  kind: "VaultCluster",
  metadata: { name: "demo", namespace: "sec", uid: "5a1c0f5e-0000-4000-8000-000000000001" },
  spec: {
    replicas,
    version: "1.14.8",
    repository: "hashicorp/vault",
    storage: { size: "1Gi" },
    tls: { duration: "2160h", renewBefore: "720h" },
    unseal: { shares: 5, threshold: 3, keepRootToken: false, retainKeysOnDelete: true },
  },
});
const settings = { reloaderImage: "busybox:1.37" };
/** The hash the operator before service registration (pod builder 1) gave a pod of cluster() (objects.ts then). */
const builder1Hash = stableHash({
  podTemplate: {},
  config: {},
  tlsSecret: "demo-tls",
  reloaderImage: "busybox:1.37",
  builder: 1,
  reloader: RELOADER_SCRIPT,
});
const selector = { "app.kubernetes.io/name": "vault", "app.kubernetes.io/instance": "demo" };

describe("Vault's service registration in the config and the pods", () => {
  const pod = vaultPod(cluster(), "demo-1", settings);
  const spec = pod.spec!;
  const vault = spec.containers.find((c) => c.name === "vault")!;
  const reloader = spec.containers.find((c) => c.name === "reloader")!;

  it("the config has the kubernetes service_registration stanza in a file of its own, and spec.config cannot set one", () => {
    const data = configMap(cluster()).data ?? {};
    expect(JSON.parse(data["service-registration.json"] ?? "{}")).toEqual({
      service_registration: { kubernetes: {} },
    });
    const c = { ...cluster(), spec: { ...cluster().spec, config: { service_registration: { consul: {} } } } };
    expect(() => vaultConfig(c)).toThrow(/service_registration/);
  });

  it("only pods built for it load that file: vault.json, which every pod loads, has no stanza", () => {
    // A pod of an older operator restarting on the new ConfigMap must not find a stanza it cannot run (no token,
    // no VAULT_K8S_POD_NAME: Vault would exit).
    expect(vaultConfig(cluster()).service_registration).toBeUndefined();
    expect(vault.args).toEqual([
      "server",
      "-config=/vault/config/vault.json",
      "-config=/vault/config/service-registration.json",
    ]);
  });

  it("the vault container knows its pod's name and namespace from the downward API", () => {
    expect(vault.env).toEqual(
      expect.arrayContaining([
        { name: "VAULT_K8S_POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
        { name: "VAULT_K8S_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
      ]),
    );
    expect(podRegisters(pod)).toBe(true);
  });

  it("runs as the cluster's ServiceAccount, with the token in the vault container only", () => {
    expect(spec.serviceAccountName).toBe("demo");
    // No automount: it would put the token into the reloader too.
    expect(spec.automountServiceAccountToken).toBe(false);
    const volume = spec.volumes?.find((v) => v.projected !== undefined);
    expect(volume?.projected?.sources).toEqual(
      expect.arrayContaining([
        { serviceAccountToken: { path: "token", expirationSeconds: 3607 } },
        { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
      ]),
    );
    expect(vault.volumeMounts).toContainEqual({
      name: volume?.name,
      mountPath: "/var/run/secrets/kubernetes.io/serviceaccount",
      readOnly: true,
    });
    expect(reloader.volumeMounts?.some((m) => m.name === volume?.name)).toBe(false);
  });

  it("pods made before registration are restarted onto it (a new pod builder version)", () => {
    expect(POD_BUILDER_VERSION).toBeGreaterThanOrEqual(2);
    expect(podTemplateHash(cluster(), settings)).not.toBe(builder1Hash);
  });

  it("without registration (its objects refused) a pod is what the previous operator made, with its hash", () => {
    const without = { ...settings, serviceRegistration: false };
    expect(podTemplateHash(cluster(), without)).toBe(builder1Hash);
    const p = vaultPod(cluster(), "demo-1", without);
    expect(p.spec?.serviceAccountName).toBeUndefined();
    expect(p.spec?.volumes?.some((v) => v.projected !== undefined)).toBe(false);
    expect(podRegisters(p)).toBe(false);
    expect(p.spec?.containers[0]?.args).toEqual(["server", "-config=/vault/config/vault.json"]);
  });
});

describe("the pods' RBAC", () => {
  it("a ServiceAccount of the cluster's, owned by it, that mounts no token by default", () => {
    const sa = serviceAccount(cluster());
    expect(sa.metadata).toMatchObject({ name: "demo", namespace: "sec" });
    expect(sa.metadata.ownerReferences?.[0]).toMatchObject({ kind: "VaultCluster", controller: true });
    expect(sa.automountServiceAccountToken).toBe(false);
  });

  it("a Role that may get and patch only this cluster's pods, by name", () => {
    const role = registrationRole(cluster(), registrationPodNames(cluster(), []));
    expect(role.metadata).toMatchObject({ name: "demo", namespace: "sec" });
    expect(role.rules).toEqual([
      {
        apiGroups: [""],
        resources: ["pods"],
        resourceNames: ["demo-0", "demo-1", "demo-2"],
        verbs: ["get", "patch"],
      },
    ]);
  });

  it("its pod names follow spec.replicas, and keep a pod being scaled in until it is gone", () => {
    expect(registrationPodNames(cluster(5), [])).toEqual(["demo-0", "demo-1", "demo-2", "demo-3", "demo-4"]);
    expect(registrationPodNames(cluster(3), ["demo-0", "demo-4", "other-9"])).toEqual([
      "demo-0",
      "demo-1",
      "demo-2",
      "demo-3",
      "demo-4",
    ]);
    expect(registrationPodNames(cluster(1), ["demo-0"])).toEqual(["demo-0"]);
  });

  it("a RoleBinding of that Role to that ServiceAccount", () => {
    const binding = registrationRoleBinding(cluster());
    expect(binding.roleRef).toEqual({ apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "demo" });
    expect(binding.subjects).toEqual([{ kind: "ServiceAccount", name: "demo", namespace: "sec" }]);
  });
});

describe("the -active Service", () => {
  it("selects the pod Vault labels vault-active=true, not the operator's label", () => {
    expect(activeService(cluster()).spec?.selector).toEqual({ ...selector, "vault-active": "true" });
    expect(liveActiveSelector(activeService(cluster()))).toBe("vault");
  });

  it("keeps the operator's label only while pods of an older operator are rolled", () => {
    expect(activeService(cluster(), "operator").spec?.selector).toEqual({
      ...selector,
      [STATE_LABEL]: "active",
    });
    expect(liveActiveSelector(activeService(cluster(), "operator"))).toBe("operator");
  });
});

describe("chooseActiveSelector: from the operator's label to Vault's without an empty Service", () => {
  const registering = (name: string, labels: Record<string, string> = {}): PodObject => {
    const p = vaultPod(cluster(), name, settings);
    return { ...p, metadata: { ...p.metadata, labels: { ...p.metadata.labels, ...labels } } };
  };
  const old = (name: string, labels: Record<string, string> = {}): PodObject => {
    const p = registering(name, labels);
    const containers = p.spec!.containers.map((c) => ({
      ...c,
      env: (c.env ?? []).filter((e) => !e.name.startsWith("VAULT_K8S_")),
    }));
    return { ...p, spec: { ...p.spec!, containers } };
  };
  const active = { [STATE_LABEL]: "active" };
  const standby = { [STATE_LABEL]: "standby" };

  it("a new cluster (no Service yet) and a Service already on Vault's label: Vault's, for good", () => {
    expect(chooseActiveSelector(undefined, [])).toBe("vault");
    expect(chooseActiveSelector("vault", [old("demo-0", active)])).toBe("vault");
    expect(chooseActiveSelector("vault", [], false)).toBe("vault");
  });

  it("while the registration's objects are refused (pods built without it): the operator's label", () => {
    expect(chooseActiveSelector(undefined, [], false)).toBe("operator");
    const done = [registering("demo-0", { ...active, "vault-active": "true" })];
    expect(chooseActiveSelector("operator", done, false)).toBe("operator");
  });

  it("an older operator's Service stays on the operator's label while any pod runs without registration", () => {
    const rolling = [
      registering("demo-0", { ...standby, "vault-active": "false" }),
      registering("demo-1", { ...standby, "vault-active": "false" }),
      old("demo-2", active),
    ];
    expect(chooseActiveSelector("operator", rolling)).toBe("operator");
  });

  it("switches once every pod registers and the active one carries vault-active=true", () => {
    const done = [
      registering("demo-0", { ...active, "vault-active": "true" }),
      registering("demo-1", { ...standby, "vault-active": "false" }),
      registering("demo-2", { ...standby, "vault-active": "false" }),
    ];
    expect(chooseActiveSelector("operator", done)).toBe("vault");
  });

  it("not while Vault has not labelled the active pod yet (the Service would be empty)", () => {
    const unlabelled = [
      registering("demo-0", active),
      registering("demo-1", standby),
      registering("demo-2", standby),
    ];
    expect(chooseActiveSelector("operator", unlabelled)).toBe("operator");
    const stale = [
      registering("demo-0", { ...active, "vault-active": "false" }),
      registering("demo-1", { ...standby, "vault-active": "true" }),
    ];
    expect(chooseActiveSelector("operator", stale)).toBe("operator");
  });

  it("a pod being deleted does not hold the switch back", () => {
    const gone = old("demo-2", standby);
    gone.metadata.deletionTimestamp = "2026-01-01T00:00:00Z";
    const pods = [registering("demo-0", { ...active, "vault-active": "true" }), gone];
    expect(chooseActiveSelector("operator", pods)).toBe("vault");
  });
});
