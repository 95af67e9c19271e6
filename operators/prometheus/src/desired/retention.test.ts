// The retention size a server runs with (issue 29 item 10): the user's, else 80% of the claim, so the disk never
// fills; none with ephemeral storage. Checked on the StatefulSet the operator applies, too.
import { storageSizeBytes } from "@capstan/core";
import { describe, expect, it } from "vitest";
import type { Prometheus, PrometheusSpec } from "../api/prometheus.ts";
import { defaultSpec } from "./config-fixtures.ts";
import { DEFAULT_RELOADER_IMAGE, statefulSet } from "./objects/statefulset.ts";
import { derivedRetentionSize, effectiveRetentionSize } from "./retention.ts";

// The claim sizes derivedRetentionSize reads through core's storageSizeBytes: the spellings spec.storage.size accepts
// (STORAGE_SIZE_PATTERN), binary and decimal, whole and fractional; anything else reads as no size.
describe("storageSizeBytes, as derivedRetentionSize reads a claim's size", () => {
  it.each<[string, number | undefined]>([
    ["10Gi", 10 * 2 ** 30],
    ["512Mi", 512 * 2 ** 20],
    ["1.5Ti", 1.5 * 2 ** 40],
    ["500M", 500e6],
    ["2G", 2e9],
    ["1000", 1000],
    ["1.5G", 1.5e9],
    ["10GB", undefined],
    ["10gi", undefined],
    ["-1Gi", undefined],
    ["1e9", undefined],
    ["", undefined],
  ])("%s", (size, bytes) => {
    expect(storageSizeBytes(size)).toBe(bytes);
  });
});

describe("derivedRetentionSize: 80% of the claim in whole MiB, as Prometheus reads MB", () => {
  it.each<[string, string | undefined]>([
    ["10Gi", "8192MB"],
    ["256Mi", "204MB"],
    ["100Gi", "81920MB"],
    ["50G", "38146MB"], // 40e9 bytes / 2^20
    ["1Ti", "838860MB"],
    ["1.5Gi", "1228MB"],
    ["1073741824", "819MB"],
    ["1Mi", undefined], // under 1 MiB left: no limit rather than a 0 that Prometheus reads as "none"
    ["nonsense", undefined],
  ])("%s -> %s", (size, want) => {
    expect(derivedRetentionSize(size)).toBe(want);
  });
});

describe("effectiveRetentionSize", () => {
  const spec = (s: Partial<PrometheusSpec>) => ({ ...defaultSpec, ...s });
  it.each<[string, Partial<PrometheusSpec>, string | undefined, string | undefined]>([
    ["the user's wins", { retentionSize: "5GB", storage: { size: "10Gi" } }, "10Gi", "5GB"],
    ["derived from the claim when unset", { storage: { size: "10Gi" } }, "10Gi", "8192MB"],
    [
      "from the claims' size when spec.storage.size changed but the claims could not",
      { storage: { size: "20Gi" } },
      "10Gi",
      "8192MB",
    ],
    ["none with ephemeral storage", { storage: { ephemeral: true } }, undefined, undefined],
    [
      "the user's with ephemeral storage",
      { retentionSize: "1GB", storage: { ephemeral: true } },
      undefined,
      "1GB",
    ],
  ])("%s", (_name, s, claim, want) => {
    expect(effectiveRetentionSize(spec(s), claim)).toBe(want);
  });
});

describe("the StatefulSet's --storage.tsdb.retention.size", () => {
  const server = (s: Partial<PrometheusSpec>): Prometheus => ({
    apiVersion: "monitoring.capstan.dev/v1alpha1",
    kind: "Prometheus",
    metadata: { name: "main", namespace: "monitoring", uid: "u" },
    spec: { ...defaultSpec, ...s },
  });
  const flag = (p: Prometheus, claim?: string) =>
    statefulSet(p, { reloaderImage: DEFAULT_RELOADER_IMAGE }, 8, claim)
      .spec?.template.spec?.containers.find((c) => c.name === "prometheus")
      ?.args?.find((a) => a.startsWith("--storage.tsdb.retention.size="));

  it("is derived from the claim size when unset, so the disk never fills", () => {
    expect(flag(server({ storage: { size: "10Gi" } }))).toBe("--storage.tsdb.retention.size=8192MB");
  });
  it("follows the claims the StatefulSet keeps, not a size it could not apply", () => {
    expect(flag(server({ storage: { size: "20Gi" } }), "10Gi")).toBe("--storage.tsdb.retention.size=8192MB");
  });
  it("is the user's when set", () => {
    expect(flag(server({ retentionSize: "4GB", storage: { size: "10Gi" } }))).toBe(
      "--storage.tsdb.retention.size=4GB",
    );
  });
  it("is absent with ephemeral storage (no size to derive from)", () => {
    expect(flag(server({ storage: { ephemeral: true } }))).toBeUndefined();
  });
});
