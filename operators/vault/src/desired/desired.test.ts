// Golden files of every object the operator builds (UPDATE_GOLDEN=1 rewrites them), and the rules they follow.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import type { VaultCluster, VaultClusterSpec } from "../api/vault-cluster.ts";
import { clientEndpoint, podApiAddr, selectorLabels, selectorString, tlsHosts } from "./names.ts";
import {
  activeService,
  clientService,
  configMap,
  dataClaim,
  internalService,
  keysSecret,
  POD_TEMPLATE_HASH_ANNOTATION,
  podDisruptionBudget,
  podTemplateHash,
  READINESS_PATH,
  tlsSecret,
  vaultConfig,
  vaultPod,
} from "./objects.ts";
import {
  registrationPodNames,
  registrationRole,
  registrationRoleBinding,
  serviceAccount,
} from "./service-registration.ts";

const UPDATE = process.env.UPDATE_GOLDEN === "1";
const TESTDATA = new URL("../../testdata/", import.meta.url);

afterAll(() => {
  if (UPDATE)
    execFileSync("npx", ["biome", "format", "--write", fileURLToPath(TESTDATA)], { stdio: "inherit" });
});

/** Compares `actual` with testdata/<name>.json; with UPDATE_GOLDEN=1 writes it instead. */
function golden(name: string, actual: unknown): void {
  const url = new URL(`${name}.json`, TESTDATA);
  const text = `${JSON.stringify(actual, null, 2)}\n`;
  if (UPDATE) writeFileSync(url, text);
  expect(existsSync(url), `testdata/${name}.json is missing: run UPDATE_GOLDEN=1 npm test`).toBe(true);
  expect(JSON.parse(readFileSync(url, "utf8"))).toEqual(JSON.parse(text));
}

const cluster = (spec: Partial<VaultClusterSpec> = {}): VaultCluster => ({
  apiVersion: "vault.capstan.dev/v1alpha1",
  kind: "VaultCluster",
  metadata: { name: "demo", namespace: "sec", uid: "5a1c0f5e-0000-4000-8000-000000000001" },
  spec: {
    replicas: 3,
    version: "1.14.8",
    repository: "hashicorp/vault",
    storage: { size: "1Gi" },
    tls: { duration: "2160h", renewBefore: "720h" },
    unseal: { shares: 5, threshold: 3, keepRootToken: false, retainKeysOnDelete: true },
    ...spec,
  },
});

const full = cluster({
  version: "1.14.6",
  repository: "registry.example/vault",
  storage: { size: "5Gi", storageClassName: "fast" },
  tls: { secretName: "vault-cert", duration: "24h", renewBefore: "8h" },
  config: { ui: true, log_level: "debug", default_lease_ttl: "1h" },
  podTemplate: {
    labels: { team: "security", "app.kubernetes.io/name": "spoofed" },
    annotations: { "example.com/owner": "security" },
    resources: { requests: { cpu: "250m", memory: "256Mi" }, limits: { memory: "512Mi", cpu: 1 } },
    affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } } },
    tolerations: [{ key: "dedicated", operator: "Equal", value: "vault", effect: "NoSchedule" }],
    nodeSelector: { "node-role": "security" },
  },
});
const settings = { reloaderImage: "busybox:1.37" };

describe("voters spread over nodes (spec.podTemplate.antiAffinity, topologyKey)", () => {
  const anti = (c: ReturnType<typeof cluster>) =>
    vaultPod(c, "demo-0", settings).spec?.affinity?.podAntiAffinity;
  const selects = { labelSelector: { matchLabels: selectorLabels(cluster()) } };
  it("by default one voter per node is required: one node never holds a quorum", () => {
    expect(anti(cluster())).toEqual({
      requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: "kubernetes.io/hostname", ...selects }],
    });
  });
  it("Preferred lets pods share a node when no other fits (a single-node cluster)", () => {
    expect(anti(cluster({ podTemplate: { antiAffinity: "Preferred" } }))).toEqual({
      preferredDuringSchedulingIgnoredDuringExecution: [
        { weight: 100, podAffinityTerm: { topologyKey: "kubernetes.io/hostname", ...selects } },
      ],
    });
  });
  it("topologyKey spreads over other domains (one voter per zone)", () => {
    const zone = "topology.kubernetes.io/zone";
    expect(anti(cluster({ podTemplate: { topologyKey: zone } }))).toEqual({
      requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: zone, ...selects }],
    });
  });
  it("a user's affinity is taken as it is", () => {
    expect(vaultPod(full, "demo-0", settings).spec?.affinity).toEqual(full.spec.podTemplate?.affinity);
  });
});

describe("golden files", () => {
  it.each([
    ["pod", () => vaultPod(cluster(), "demo-0", settings)],
    ["pod-full-template", () => vaultPod(full, "demo-2", { reloaderImage: "capstan.local/busybox:1" })],
    ["pvc", () => dataClaim(cluster(), "demo-0")],
    ["pvc-storage-class", () => dataClaim(full, "demo-1")],
    ["pvc-owned", () => dataClaim(cluster({ storage: { size: "1Gi", whenDeleted: "Delete" } }), "demo-0")],
    ["service-client", () => clientService(cluster())],
    ["service-active", () => activeService(cluster())],
    ["service-internal", () => internalService(cluster())],
    ["configmap", () => configMap(cluster())],
    ["configmap-extra-config", () => configMap(full)],
    ["pdb", () => podDisruptionBudget(cluster(), 5)],
    ["secret-keys-retained", () => keysSecret(cluster(), { "unseal-key-0": "k0" }, { a: "b" })],
    [
      "secret-keys-owned",
      () =>
        keysSecret(
          cluster({ unseal: { shares: 1, threshold: 1, keepRootToken: true, retainKeysOnDelete: false } }),
          { "unseal-key-0": "k0", "root-token": "r" },
          {},
        ),
    ],
    ["secret-tls", () => tlsSecret(cluster(), "demo-tls", { cert: "CERT", key: "KEY" }, "CA")],
    ["serviceaccount", () => serviceAccount(cluster())],
    ["role-registration", () => registrationRole(cluster(), registrationPodNames(cluster(), []))],
    ["rolebinding-registration", () => registrationRoleBinding(cluster())],
  ])("%s", (name, build) => golden(name, build()));
});

describe("pods", () => {
  const pod = vaultPod(cluster(), "demo-1", settings);
  const spec = pod.spec!;
  const vault = spec.containers[0]!;

  it("pass Pod Security restricted: non-root uid 100, no capabilities, seccomp, read-only root", () => {
    expect(spec.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 100,
      seccompProfile: { type: "RuntimeDefault" },
    });
    for (const c of spec.containers) {
      expect(c.securityContext).toMatchObject({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        runAsNonRoot: true,
        capabilities: { drop: ["ALL"] },
      });
    }
    expect(spec.volumes?.some((v) => v.name === "tmp" && v.emptyDir !== undefined)).toBe(true);
    expect(spec.volumes?.some((v) => v.hostPath !== undefined)).toBe(false);
  });

  it("share the process namespace with the reloader, which runs as vault's uid", () => {
    expect(spec.shareProcessNamespace).toBe(true);
    expect(spec.containers[1]?.securityContext?.runAsUser).toBe(100);
  });

  it("are ready only when unsealed (sealed 503, uninitialized 501)", () => {
    expect(vault.readinessProbe?.httpGet?.path).toBe(READINESS_PATH);
    expect(READINESS_PATH).not.toMatch(/sealedcode|uninitcode/);
    expect(vault.livenessProbe?.httpGet?.path).toMatch(/sealedcode=204&uninitcode=204/);
  });

  it("carry their identity in the environment: node_id = pod name, api_addr = pod DNS name", () => {
    expect(vault.env).toEqual(
      expect.arrayContaining([
        { name: "VAULT_RAFT_NODE_ID", value: "demo-1" },
        { name: "VAULT_API_ADDR", value: podApiAddr(cluster(), "demo-1") },
      ]),
    );
    expect(podApiAddr(cluster(), "demo-1")).toBe("https://demo-1.demo-internal.sec.svc:8200");
  });

  it("keep the operator's labels over the template's", () => {
    const p = vaultPod(full, "demo-0", settings);
    expect(p.metadata.labels?.["app.kubernetes.io/name"]).toBe("vault");
    expect(p.metadata.labels?.team).toBe("security");
  });

  it("hash the template but not the version (a version change is an in-place upgrade)", () => {
    const a = podTemplateHash(cluster(), settings);
    expect(podTemplateHash(cluster({ version: "1.14.6" }), settings)).toBe(a);
    expect(podTemplateHash(cluster({ config: { ui: true } }), settings)).not.toBe(a);
    expect(podTemplateHash(cluster(), { reloaderImage: "other" })).not.toBe(a);
    expect(podTemplateHash(cluster({ replicas: 5 }), settings)).toBe(a);
    expect(pod.metadata.annotations?.[POD_TEMPLATE_HASH_ANNOTATION]).toBe(a);
  });
});

describe("config", () => {
  it("refuses an operator-owned key", () => {
    expect(() => vaultConfig(cluster({ config: { storage: {} } }))).toThrow(
      /spec.config must not set storage/,
    );
  });
  it("lets spec.config override ui but never the listener", () => {
    const c = vaultConfig(full);
    expect(c.ui).toBe(true);
    expect(c.disable_mlock).toBe(true);
    expect(c.storage).toEqual({ raft: { path: "/vault/data" } });
  });
});

describe("names", () => {
  it("the certificate names every Service form, every possible pod, localhost and 127.0.0.1", () => {
    const hosts = tlsHosts(cluster());
    for (const h of [
      "demo",
      "demo.sec.svc",
      "demo-active.sec.svc.cluster.local",
      "demo-internal.sec",
      "demo-0.demo-internal.sec.svc",
      "demo-4.demo-internal.sec.svc",
      "localhost",
      "127.0.0.1",
    ]) {
      expect(hosts).toContain(h);
    }
  });
  it("status fields", () => {
    expect(clientEndpoint(cluster())).toBe("https://demo.sec.svc:8200");
    expect(selectorString(cluster())).toBe("app.kubernetes.io/name=vault,app.kubernetes.io/instance=demo");
  });
  it("the PDB keeps a quorum of the larger of spec.replicas and the voters", () => {
    expect(podDisruptionBudget(cluster(), 5).spec?.minAvailable).toBe(3);
    expect(podDisruptionBudget(cluster(), 0).spec?.minAvailable).toBe(2);
  });
  it("a single server's PDB never blocks a node drain for ever (it has no quorum to keep): minAvailable 0", () => {
    expect(podDisruptionBudget(cluster({ replicas: 1 }), 1).spec?.minAvailable).toBe(0);
    expect(podDisruptionBudget(cluster({ replicas: 1 }), 0).spec?.minAvailable).toBe(0);
    // Scaling in from three: while three voters remain, their quorum is kept.
    expect(podDisruptionBudget(cluster({ replicas: 1 }), 3).spec?.minAvailable).toBe(2);
  });
});
