// Tests of the shared pod pieces: exact restricted-profile contexts (a missing field fails the profile), the
// anti-affinity in both modes, and resource quantities as strings.
import { describe, expect, it } from "vitest";
import {
  resourceRequirements,
  restrictedContainerSecurityContext,
  restrictedPodSecurityContext,
  spreadOverNodes,
} from "./pod-spec.ts";

describe("restricted security contexts", () => {
  it.each<[number, number | undefined, Record<string, unknown>]>([
    [1000, undefined, { runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000 }],
    [100, 1000, { runAsNonRoot: true, runAsUser: 100, runAsGroup: 1000, fsGroup: 1000 }],
  ])("pod context for uid %s gid %s", (uid, gid, ids) => {
    expect(restrictedPodSecurityContext(uid, gid)).toEqual({
      ...ids,
      seccompProfile: { type: "RuntimeDefault" },
    });
  });

  it.each([
    [undefined, {}],
    [65532, { runAsUser: 65532 }],
  ])("container context with runAsUser %s", (uid, extra) => {
    expect(restrictedContainerSecurityContext(uid)).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ["ALL"] },
      seccompProfile: { type: "RuntimeDefault" },
      ...extra,
    });
  });

  it("each call returns a fresh object", () => {
    const a = restrictedContainerSecurityContext();
    a.capabilities?.drop?.push("NET_RAW");
    expect(restrictedContainerSecurityContext().capabilities).toEqual({ drop: ["ALL"] });
  });
});

describe("spreadOverNodes", () => {
  const term = { topologyKey: "kubernetes.io/hostname", labelSelector: { matchLabels: { app: "x" } } };
  it.each([
    [
      undefined,
      {
        podAntiAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: term }],
        },
      },
    ],
    [
      "Preferred" as const,
      {
        podAntiAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: term }],
        },
      },
    ],
    ["Required" as const, { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term] } }],
  ])("mode %s", (mode, expected) => {
    expect(spreadOverNodes({ app: "x" }, mode)).toEqual(expected);
  });
  it("spreads over the domains of another topology key (one pod per zone)", () => {
    const zone = "topology.kubernetes.io/zone";
    expect(spreadOverNodes({ app: "x" }, "Required", zone)).toEqual({
      podAntiAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: [{ ...term, topologyKey: zone }],
      },
    });
  });
});

describe("resourceRequirements", () => {
  it.each([
    [{}, {}],
    [{ requests: { cpu: 1, memory: "1Gi" } }, { requests: { cpu: "1", memory: "1Gi" } }],
    [{ limits: { cpu: 0.5 } }, { limits: { cpu: "0.5" } }],
    [
      { limits: { memory: "2Gi" }, requests: { cpu: "100m" } },
      { limits: { memory: "2Gi" }, requests: { cpu: "100m" } },
    ],
  ])("%j", (input, expected) => {
    expect(resourceRequirements(input)).toEqual(expected);
  });
});
