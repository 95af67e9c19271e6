// What observe reads from a pod's status for the planner: the kubelet's evidence about a vault container that
// does not run (its waiting reason, restarts, last exit), and the seal progress of a sealed pod.
import type { PodObject } from "@capstan/core";
import { describe, expect, it } from "vitest";
import type { VaultCluster } from "../api/vault-cluster.ts";
import { dataClaim } from "../desired/objects.ts";
import { claimSizes, containerFailure, observedPod } from "./observe.ts";

const cluster = {
  apiVersion: "vault.capstan.dev/v1alpha1",
  kind: "VaultCluster",
  metadata: { name: "demo", namespace: "ns", uid: "u1" },
  spec: {},
} as unknown as VaultCluster;

function podWith(containerStatus: Record<string, unknown>): PodObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "demo-1", namespace: "ns" },
    spec: { containers: [{ name: "vault", image: "hashicorp/vault:1.14.8" }] },
    status: {
      phase: "Running",
      containerStatuses: [
        { name: "reloader", image: "busybox:1.37", imageID: "", ready: true, restartCount: 0 },
        { name: "vault", image: "hashicorp/vault:1.14.8", imageID: "", ready: false, ...containerStatus },
      ],
    },
  } as PodObject;
}

const crashLooping = podWith({
  restartCount: 6,
  state: { waiting: { reason: "CrashLoopBackOff", message: "back-off 2m40s restarting failed container" } },
  lastState: {
    terminated: {
      exitCode: 1,
      reason: "Error",
      message: "Error parsing config",
      finishedAt: "2026-12-01T00:00:00Z",
    },
  },
});

describe("containerFailure", () => {
  it("a crash loop: the kubelet's reason and message, restarts, the last exit code, reason and message", () => {
    expect(containerFailure(crashLooping)).toEqual({
      reason: "CrashLoopBackOff",
      message: "back-off 2m40s restarting failed container",
      restarts: 6,
      lastExit: { exitCode: 1, reason: "Error", message: "Error parsing config" },
    });
  });

  it("a container that cannot be created", () => {
    const pod = podWith({
      restartCount: 0,
      state: { waiting: { reason: "CreateContainerConfigError", message: 'secret "demo-tls" not found' } },
    });
    expect(containerFailure(pod)).toEqual({
      reason: "CreateContainerConfigError",
      message: 'secret "demo-tls" not found',
      restarts: 0,
    });
  });

  it.each([
    ["running", { restartCount: 2, state: { running: { startedAt: "2026-12-01T00:00:00Z" } } }],
    ["starting", { restartCount: 0, state: { waiting: { reason: "ContainerCreating" } } }],
    [
      "pulling (reported as imagePullError)",
      { restartCount: 0, state: { waiting: { reason: "ImagePullBackOff" } } },
    ],
  ])("none while %s", (_, status) => expect(containerFailure(podWith(status))).toBeUndefined());

  it("only the vault container counts", () => {
    const pod = podWith({ restartCount: 0, state: { running: {} } });
    pod.status!.containerStatuses![0]!.state = { waiting: { reason: "CrashLoopBackOff" } };
    expect(containerFailure(pod)).toBeUndefined();
  });
});

describe("observedPod", () => {
  it("carries the container failure and the seal progress to the planner", () => {
    const p = observedPod(
      cluster,
      crashLooping,
      "hash",
      { reachable: false, error: "connect ECONNREFUSED" },
      { threshold: 3, shares: 5, progress: 1 },
    );
    expect(p?.containerFailure?.reason).toBe("CrashLoopBackOff");
    expect(p?.seal).toEqual({ threshold: 3, shares: 5, progress: 1 });
  });
});

describe("claimSizes", () => {
  it("the size each data claim requests, as the operator made it and after an expansion by hand", () => {
    const c = { ...cluster, spec: { storage: { size: "1Gi" } } } as unknown as VaultCluster;
    const made = dataClaim(c, "demo-0");
    const grown = dataClaim(c, "demo-1");
    grown.spec!.resources!.requests!.storage = "2Gi";
    expect(
      claimSizes(
        new Map([
          ["data-demo-0", made],
          ["data-demo-1", grown],
        ]),
      ),
    ).toEqual({ "data-demo-0": "1Gi", "data-demo-1": "2Gi" });
  });
});
