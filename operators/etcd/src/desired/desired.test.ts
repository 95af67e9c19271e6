import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_STORAGE_SIZE, type EtcdCluster, type EtcdClusterSpec } from "../api/etcd-cluster.ts";
import { clientService, memberDataClaim, peerService, podDisruptionBudget } from "./cluster-objects.ts";
import { etcdArgs, memberPod, POD_TEMPLATE_HASH_ANNOTATION, podTemplateHash } from "./member-pod.ts";
import { clientEndpoint, memberName, memberNameFromPeerURL, peerURL, selectorString } from "./names.ts";
import { quantityBytes, quotaBackendBytes } from "./quota.ts";

const UPDATE = process.env.UPDATE_GOLDEN === "1";
const TESTDATA = new URL("../../testdata/", import.meta.url);

// Rewritten golden files are put in the repository's JSON format, so `biome check` stays clean.
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

const cluster = (spec: Partial<EtcdClusterSpec> = {}): EtcdCluster => ({
  apiVersion: "etcd.capstan.dev/v1alpha1",
  kind: "EtcdCluster",
  metadata: { name: "demo", namespace: "db", uid: "6f1c0f5e-0000-4000-8000-000000000001" },
  spec: {
    replicas: 3,
    version: "3.6.15",
    repository: "gcr.io/etcd-development/etcd",
    storage: { size: "2Gi" },
    ...spec,
  },
});

const full = cluster({
  version: "3.5.21",
  repository: "registry.example/etcd",
  storage: { size: "8Gi", storageClassName: "fast" },
  podTemplate: {
    resources: { requests: { cpu: "250m", memory: "512Mi" }, limits: { memory: "1Gi", cpu: 1 } },
    affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } } },
    tolerations: [{ key: "dedicated", operator: "Equal", value: "etcd", effect: "NoSchedule" }],
    nodeSelector: { "node-role": "db" },
    labels: { team: "storage", "etcd.capstan.dev/cluster": "spoofed" },
    annotations: { "example.com/owner": "storage" },
    priorityClassName: "system-cluster-critical",
  },
});

const seed = memberName(cluster(), "a1b2c");
const seedInput = {
  cluster: cluster(),
  member: seed,
  initialCluster: [{ name: seed, peerURL: peerURL(cluster(), seed) }],
  initialClusterState: "new" as const,
};
const joiner = "demo-x9y8z";
const joinInput = {
  cluster: full,
  member: joiner,
  initialCluster: [seed, joiner].map((name) => ({ name, peerURL: peerURL(full, name) })),
  initialClusterState: "existing" as const,
};

describe("golden files", () => {
  it.each([
    ["pod-seed", () => memberPod(seedInput)],
    ["pod-joining-full-template", () => memberPod(joinInput)],
    ["pod-ephemeral", () => memberPod({ ...seedInput, cluster: cluster({ storage: { ephemeral: true } }) })],
    ["pvc", () => memberDataClaim(cluster(), seed)],
    ["pvc-storage-class", () => memberDataClaim(full, joiner)],
    ["service-peer", () => peerService(cluster())],
    ["service-client", () => clientService(cluster())],
    ["pdb", () => podDisruptionBudget(cluster())],
  ] as const)("%s", (name, build) => golden(name, build()));
});

describe("member pod", () => {
  const pod = memberPod(joinInput);
  const container = pod.spec!.containers[0]!;

  it("runs the image of spec.version, or the version it is given", () => {
    expect(container.image).toBe("registry.example/etcd:v3.5.21");
    expect(memberPod({ ...joinInput, version: "3.5.20" }).spec!.containers[0]!.image).toBe(
      "registry.example/etcd:v3.5.20",
    );
  });

  it("joins an existing cluster with every member in --initial-cluster", () => {
    expect(container.args).toContain("--initial-cluster-state=existing");
    expect(container.args).toContain(
      `--initial-cluster=demo-a1b2c=${peerURL(full, seed)},demo-x9y8z=${peerURL(full, joiner)}`,
    );
    expect(container.args).toContain(`--initial-advertise-peer-urls=${peerURL(full, joiner)}`);
  });

  it("refuses an --initial-cluster without the member itself", () => {
    expect(() => etcdArgs({ ...joinInput, initialCluster: [] })).toThrow(/must include member demo-x9y8z/);
  });

  it("passes Pod Security restricted", () => {
    const podSc = pod.spec!.securityContext!;
    const sc = container.securityContext!;
    expect(podSc.runAsNonRoot).toBe(true);
    expect(podSc.seccompProfile?.type).toBe("RuntimeDefault");
    expect(sc.allowPrivilegeEscalation).toBe(false);
    expect(sc.capabilities?.drop).toEqual(["ALL"]);
    expect(sc.runAsNonRoot).toBe(true);
    expect(sc.readOnlyRootFilesystem).toBe(true);
    expect(pod.spec!.volumes!.every((v) => v.hostPath === undefined)).toBe(true);
    expect(container.ports!.every((p) => p.hostPort === undefined)).toBe(true);
  });

  it("probes /livez and /readyz on the client port", () => {
    expect(container.livenessProbe?.httpGet).toEqual({ path: "/livez", port: "client" });
    expect(container.readinessProbe?.httpGet).toEqual({ path: "/readyz", port: "client" });
  });

  it("keeps the operator's labels over the template's", () => {
    expect(pod.metadata.labels?.["etcd.capstan.dev/cluster"]).toBe("demo");
    expect(pod.metadata.labels?.team).toBe("storage");
  });

  it("is controlled by the EtcdCluster", () => {
    expect(pod.metadata.ownerReferences).toEqual([
      {
        apiVersion: "etcd.capstan.dev/v1alpha1",
        kind: "EtcdCluster",
        name: "demo",
        uid: full.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
  });

  it("uses an emptyDir and no claim with ephemeral storage", () => {
    const eph = cluster({ storage: { ephemeral: true } });
    expect(memberPod({ ...seedInput, cluster: eph }).spec!.volumes).toEqual([{ name: "data", emptyDir: {} }]);
    expect(memberDataClaim(eph, seed)).toBeUndefined();
  });
});

describe("PodDisruptionBudget keeps a quorum", () => {
  it.each([
    [1, 1],
    [3, 2],
    [5, 3],
    [9, 5],
  ])("replicas %i -> minAvailable %i", (replicas, min) => {
    expect(podDisruptionBudget(cluster({ replicas })).spec!.minAvailable).toBe(min);
  });

  it("of the voters that exist while scaling in: 5 -> 3 keeps minAvailable 3 until members are removed", () => {
    expect(podDisruptionBudget(cluster({ replicas: 3 }), 5).spec!.minAvailable).toBe(3);
    expect(podDisruptionBudget(cluster({ replicas: 5 }), 3).spec!.minAvailable).toBe(3);
  });
});

describe("disk: quota from the volume, compaction, extra flags", () => {
  const args = (spec: Partial<EtcdCluster["spec"]>) =>
    memberPod({ ...seedInput, cluster: cluster(spec) }).spec!.containers[0]!.args ?? [];

  it.each([
    ["1Gi", 256 * 1024 ** 2],
    ["8Gi", 3.75 * 1024 ** 3],
    ["20Gi", 8 * 1024 ** 3],
    ["64Mi", 16 * 1024 ** 2],
  ])(
    "a %s volume: quota %i bytes, always below the volume with room for a copy and the WAL",
    (size, quota) => {
      expect(quotaBackendBytes(size)).toBe(quota);
      expect(args({ storage: { size } })).toContain(`--quota-backend-bytes=${quota}`);
    },
  );

  it("the default volume holds more than etcd's own 2 GiB default quota, with room for a copy", () => {
    expect(quotaBackendBytes(DEFAULT_STORAGE_SIZE)).toBeGreaterThanOrEqual(2 * 1024 ** 3);
    expect(quantityBytes(DEFAULT_STORAGE_SIZE)).toBeGreaterThan(2 * quotaBackendBytes(DEFAULT_STORAGE_SIZE));
  });

  it("compacts periodically by default; spec.maintenance overrides", () => {
    expect(args({})).toEqual(
      expect.arrayContaining(["--auto-compaction-mode=periodic", "--auto-compaction-retention=1h"]),
    );
    const revision = args({
      maintenance: { autoCompactionMode: "revision", autoCompactionRetention: "1000" },
    });
    expect(revision).toEqual(
      expect.arrayContaining(["--auto-compaction-mode=revision", "--auto-compaction-retention=1000"]),
    );
  });

  it("adds extraArgs (sorted) and extraEnv; a change restarts the members (template hash)", () => {
    const spec = {
      extraArgs: { "snapshot-count": "5000", "max-txn-ops": "256" },
      extraEnv: [{ name: "GOMAXPROCS", value: "2" }],
    };
    const pod = memberPod({ ...seedInput, cluster: cluster(spec) });
    expect(pod.spec!.containers[0]!.args!.slice(-2)).toEqual(["--max-txn-ops=256", "--snapshot-count=5000"]);
    expect(pod.spec!.containers[0]!.env).toEqual([{ name: "GOMAXPROCS", value: "2" }]);
    expect(podTemplateHash(cluster(spec))).not.toBe(podTemplateHash(cluster()));
  });
});

describe("production defaults", () => {
  const spec = (podTemplate: EtcdCluster["spec"]["podTemplate"]) =>
    memberPod({ ...seedInput, cluster: cluster(podTemplate === undefined ? {} : { podTemplate }) }).spec!;

  it("requests resources (never BestEffort) unless the template sets them", () => {
    expect(spec(undefined).containers[0]!.resources).toEqual({ requests: { cpu: "100m", memory: "256Mi" } });
    expect(spec({ resources: { limits: { memory: "1Gi" } } }).containers[0]!.resources).toEqual({
      limits: { memory: "1Gi" },
    });
  });

  it("spreads members across zones and nodes by default", () => {
    expect(
      spec(undefined).topologySpreadConstraints?.map((t) => [t.topologyKey, t.whenUnsatisfiable]),
    ).toEqual([
      ["topology.kubernetes.io/zone", "ScheduleAnyway"],
      ["kubernetes.io/hostname", "ScheduleAnyway"],
    ]);
  });

  it("requires one member per node with antiAffinity: Required", () => {
    const anti = spec({ antiAffinity: "Required" }).affinity?.podAntiAffinity;
    expect(anti?.requiredDuringSchedulingIgnoredDuringExecution?.[0]?.topologyKey).toBe(
      "kubernetes.io/hostname",
    );
    expect(anti?.preferredDuringSchedulingIgnoredDuringExecution).toBeUndefined();
    expect(
      spec(undefined).affinity?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution,
    ).toHaveLength(1);
  });

  it("keeps etcd's last log lines as the termination message (the operator reads an empty data dir from it)", () => {
    expect(spec(undefined).containers[0]!.terminationMessagePolicy).toBe("FallbackToLogsOnError");
  });
});

describe("names", () => {
  it("recovers a member's name from the peer URL the operator wrote", () => {
    expect(memberNameFromPeerURL(peerURL(cluster(), "demo-abcde"))).toBe("demo-abcde");
    expect(memberNameFromPeerURL("http://10.0.0.1:2380")).toBeUndefined();
    expect(memberNameFromPeerURL("not a url")).toBeUndefined();
  });

  it("gives the selector and client endpoint", () => {
    expect(selectorString(cluster())).toBe("app.kubernetes.io/name=etcd,etcd.capstan.dev/cluster=demo");
    expect(clientEndpoint(cluster())).toBe("http://demo-client.db.svc:2379");
  });

  it("refuses a cluster without namespace", () => {
    const c = cluster();
    delete c.metadata.namespace;
    expect(() => peerService(c)).toThrow(/metadata.namespace/);
  });
});

describe("podTemplateHash", () => {
  it("changes with spec.podTemplate or spec.repository, not with the version, replicas or key order", () => {
    const base = podTemplateHash(full);
    expect(podTemplateHash(cluster({ ...full.spec, version: "3.5.22", replicas: 5 }))).toBe(base);
    const reordered = cluster({
      ...full.spec,
      podTemplate: Object.fromEntries(Object.entries(full.spec.podTemplate ?? {}).reverse()),
    });
    expect(podTemplateHash(reordered)).toBe(base);
    const resized = cluster({
      ...full.spec,
      podTemplate: { ...full.spec.podTemplate, resources: { requests: { cpu: "500m" } } },
    });
    expect(podTemplateHash(resized)).not.toBe(base);
    expect(podTemplateHash(cluster({ ...full.spec, repository: "other/etcd" }))).not.toBe(base);
  });

  it("is stamped on every member pod", () => {
    expect(memberPod(joinInput).metadata.annotations?.[POD_TEMPLATE_HASH_ANNOTATION]).toBe(
      podTemplateHash(full),
    );
  });
});
