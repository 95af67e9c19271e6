import type { ClaimRetention, Condition, PodPlacement } from "@capstan/core";
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  EtcdClusterKind,
  type EtcdClusterPhase,
  type EtcdClusterSpec,
  type EtcdClusterStatus,
  type EtcdEnvVar,
  type EtcdMemberStatus,
  type EtcdPodTemplate,
  type EtcdStorage,
  etcdClusterCrd,
  etcdClusterSchema,
} from "./etcd-cluster.ts";

// Each record must name every key of its type and nothing else (the compiler checks that side); the tests
// check the schema names the same properties (the types are derived from the schema; these catch a key lost on the way).
const specKeys: Record<keyof EtcdClusterSpec, true> = {
  replicas: true,
  version: true,
  repository: true,
  storage: true,
  podTemplate: true,
  paused: true,
  recovery: true,
  maintenance: true,
  extraArgs: true,
  extraEnv: true,
  bootstrap: true,
  tls: true,
  network: true,
  auth: true,
};
const storageKeys: Record<keyof EtcdStorage, true> = {
  size: true,
  storageClassName: true,
  ephemeral: true,
  whenDeleted: true,
};
const podTemplateKeys: Record<keyof EtcdPodTemplate, true> = {
  resources: true,
  affinity: true,
  tolerations: true,
  nodeSelector: true,
  labels: true,
  annotations: true,
  priorityClassName: true,
  antiAffinity: true,
  topologySpreadConstraints: true,
};
const statusKeys: Record<keyof EtcdClusterStatus, true> = {
  observedGeneration: true,
  phase: true,
  conditions: true,
  replicas: true,
  readyReplicas: true,
  members: true,
  leader: true,
  currentVersion: true,
  clusterID: true,
  selector: true,
  clientEndpoint: true,
  restore: true,
  auth: true,
  quorumLostSince: true,
};
const memberKeys: Record<keyof EtcdMemberStatus, true> = {
  name: true,
  id: true,
  peerURL: true,
  clientURLs: true,
  version: true,
  healthy: true,
  learner: true,
  leader: true,
  raftIndex: true,
  progressTime: true,
};

type Schema = { properties?: Record<string, Schema>; items?: Schema; [key: string]: unknown };
const root = etcdClusterSchema as unknown as Schema;
const spec = root.properties!.spec!;
const status = root.properties!.status!;

const propertyNames = (s: Schema | undefined) => Object.keys(s?.properties ?? {}).sort();

describe("EtcdCluster types match the schema", () => {
  it.each([
    ["spec", specKeys, spec],
    ["spec.storage", storageKeys, spec.properties!.storage],
    ["spec.podTemplate", podTemplateKeys, spec.properties!.podTemplate],
    ["status", statusKeys, status],
    ["status.members[]", memberKeys, status.properties!.members!.items],
  ] as const)("%s", (_path, keys, schema) => {
    expect(propertyNames(schema)).toEqual(Object.keys(keys).sort());
  });
});

describe("etcdClusterCrd", () => {
  const crd = etcdClusterCrd();
  const version = crd.spec.versions[0]!;

  it("is named after the kind's plural and group", () => {
    expect(crd.metadata.name).toBe("etcdclusters.etcd.capstan.dev");
    expect(EtcdClusterKind.apiVersion).toBe("etcd.capstan.dev/v1alpha1");
    expect(crd.spec.names).toMatchObject({
      kind: "EtcdCluster",
      shortNames: ["etcd"],
      categories: ["capstan"],
    });
  });

  it("has status and scale subresources pointing at real fields", () => {
    expect(version.subresources?.status).toEqual({});
    expect(version.subresources?.scale).toEqual({
      specReplicasPath: ".spec.replicas",
      statusReplicasPath: ".status.replicas",
      labelSelectorPath: ".status.selector",
    });
  });

  it("bounds and defaults replicas", () => {
    expect(spec.properties!.replicas).toMatchObject({ minimum: 1, maximum: 9, default: 3 });
  });

  it("printer columns read existing paths", () => {
    for (const col of version.additionalPrinterColumns ?? []) {
      const [, top, field] = /^\.(\w+)\.(\w+)/.exec(col.jsonPath) ?? [];
      if (top === "metadata") continue;
      expect(Object.keys((top === "spec" ? spec : status).properties ?? {})).toContain(field);
    }
  });

  it("returns a fresh object each time", () => {
    const a = etcdClusterCrd();
    a.spec.names.kind = "Changed";
    expect(etcdClusterCrd().spec.names.kind).toBe("EtcdCluster");
  });
});

// The CEL rules are checked here with their JavaScript equivalents on sample values, so a typo in a rule's
// intent shows up without an API server; the integration suite runs the real CEL.
describe("version rule", () => {
  const rule = (
    spec.properties!.version!["x-kubernetes-validations"] as { rule: string; message: string }[]
  )[0]!;
  const regex = new RegExp(/'(.*)'/.exec(rule.rule)![1]!);

  it.each(["3.5.0", "3.5.21", "3.6.15"])("accepts %s", (v) => expect(regex.test(v)).toBe(true));
  it.each(["v3.6.15", "3.4.30", "3.7.0", "3.6", "3.6.1-rc.0", "latest", "4.0.0"])("rejects %s", (v) =>
    expect(regex.test(v)).toBe(false),
  );
  it("names the field's format in its message", () => {
    expect(rule.message).toMatch(/MAJOR\.MINOR\.PATCH/);
  });
});

describe("EtcdCluster types derived from the schema", () => {
  it("types the fields the code reads", () => {
    // Defaulted by the API server, so always present on a read object.
    expectTypeOf<EtcdClusterSpec["replicas"]>().toEqualTypeOf<number>();
    expectTypeOf<EtcdClusterSpec["version"]>().toEqualTypeOf<string>();
    expectTypeOf<EtcdClusterSpec["storage"]>().toEqualTypeOf<EtcdStorage>();
    expectTypeOf<EtcdClusterSpec["paused"]>().toEqualTypeOf<boolean | undefined>();
    expectTypeOf<EtcdClusterSpec["extraArgs"]>().toEqualTypeOf<Record<string, string> | undefined>();
    expectTypeOf<EtcdClusterSpec["extraEnv"]>().toEqualTypeOf<EtcdEnvVar[] | undefined>();
    expectTypeOf<EtcdStorage["whenDeleted"]>().toEqualTypeOf<ClaimRetention | undefined>();
    expectTypeOf<EtcdPodTemplate["antiAffinity"]>().toEqualTypeOf<"Preferred" | "Required" | undefined>();
    expectTypeOf<EtcdPodTemplate>().toExtend<PodPlacement>();
    expectTypeOf<EtcdClusterStatus["phase"]>().toEqualTypeOf<EtcdClusterPhase | undefined>();
    expectTypeOf<EtcdClusterStatus["conditions"]>().toEqualTypeOf<Condition[] | undefined>();
    expectTypeOf<EtcdClusterStatus["members"]>().toEqualTypeOf<EtcdMemberStatus[] | undefined>();
    expectTypeOf<EtcdClusterStatus["auth"]>().toEqualTypeOf<"Enabled" | "Disabled" | undefined>();
    expectTypeOf<EtcdMemberStatus["healthy"]>().toEqualTypeOf<boolean>();
    expectTypeOf<EtcdMemberStatus["raftIndex"]>().toEqualTypeOf<number | undefined>();
  });
  it("refuses a field the schema lacks", () => {
    // @ts-expect-error the CRD has no spec.size (it is spec.storage.size): the API server would prune it
    const size: EtcdClusterSpec["size"] = "8Gi";
    expect(size).toBe("8Gi");
  });
});
