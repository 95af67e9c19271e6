// Which VaultSnapshots a restore may still read: named by a VaultCluster's spec.restore and not yet restored.
import { describe, expect, it } from "vitest";
import type { VaultCluster } from "../api/vault-cluster.ts";
import { snapshotsInUse } from "./snapshot-use.ts";

const cluster = (name: string, snapshot: string | undefined, o: Partial<VaultCluster> = {}): VaultCluster =>
  ({
    apiVersion: "vault.capstan.dev/v1alpha1",
    kind: "VaultCluster",
    metadata: { name, namespace: "ns" },
    spec: {
      replicas: 3,
      ...(snapshot === undefined ? {} : { restore: { snapshot: { name: snapshot } } }),
    },
    ...o,
  }) as VaultCluster;

describe("snapshotsInUse", () => {
  it.each<[string, VaultCluster[], [string, string][]]>([
    ["no restore", [cluster("a", undefined)], []],
    [
      "a restore not yet done",
      [cluster("a", "s1")],
      [["s1", "VaultCluster a's spec.restore (not restored yet)"]],
    ],
    [
      "a restore done",
      [
        cluster("a", "s1", {
          status: { restore: { source: "snapshot/s1", completionTime: "2026-12-01T00:00:00Z" } },
        }),
      ],
      [],
    ],
    [
      "a cluster being deleted",
      [cluster("a", "s1", { metadata: { name: "a", deletionTimestamp: "2026-12-01T00:00:00Z" } })],
      [],
    ],
    [
      "the first user names it",
      [cluster("a", "s1"), cluster("b", "s1")],
      [["s1", "VaultCluster a's spec.restore (not restored yet)"]],
    ],
  ])("%s", (_name, clusters, expected) => {
    expect([...snapshotsInUse(clusters)]).toEqual(expected);
  });
});
