// The EtcdCluster reference rendered by @capstan/cli from this operator's schema: what docs/operators/etcd.md
// shows for each field, level, rule and name (the renderer's own tests are in packages/cli).
import { renderCrdReference } from "@capstan/cli";
import { describe, expect, it } from "vitest";
import { etcdClusterCrd } from "./etcd-cluster.ts";

const SOURCE = "src/api/crds.ts in @capstan/etcd-operator";

/** The table row whose first cell is `path` in backticks. */
function row(markdown: string, path: string): string[] {
  const line = markdown.split("\n").find((l) => l.startsWith(`| \`${path}\` `));
  expect(line, `a table row for ${path}`).toBeDefined();
  return line!
    .slice(2, -2)
    .split(/(?<!\\)\|/)
    .map((c) => c.trim());
}

describe("renderCrdReference on the EtcdCluster CRD", () => {
  const md = renderCrdReference(etcdClusterCrd(), SOURCE);

  it("is deterministic and ends with one newline", () => {
    expect(renderCrdReference(etcdClusterCrd(), SOURCE)).toBe(md);
    expect(md.endsWith("\n")).toBe(true);
    expect(md.endsWith("\n\n")).toBe(false);
  });

  it("shows defaults and bounds of spec fields", () => {
    expect(row(md, "spec.replicas")).toEqual([
      "`spec.replicas`",
      "integer (int32)",
      "`3`",
      "1 to 9",
      "Number of voting members (odd numbers tolerate the same failures with fewer members).",
    ]);
    expect(row(md, "spec.version")[2]).toBe('`"3.6.15"`');
    expect(row(md, "spec.repository")[3]).toBe("length 1 to 512");
    expect(row(md, "spec.storage")[2]).toBe('`{"size":"8Gi"}`');
  });

  it("renders every object level with nested paths", () => {
    for (const level of [
      "spec",
      "spec.storage",
      "spec.podTemplate",
      "spec.podTemplate.resources",
      "spec.podTemplate.tolerations[]",
      "status",
      "status.conditions[]",
      "status.members[]",
    ]) {
      expect(md).toContain(`\n#### \`${level}\`\n`);
    }
    expect(row(md, "spec.storage.size")[3]).toContain("pattern `^([0-9]+(\\.[0-9]+)?)(Ki\\|Mi");
    expect(row(md, "spec.podTemplate.tolerations[].effect")[3]).toBe(
      "one of `NoSchedule`, `PreferNoSchedule`, `NoExecute`",
    );
    expect(row(md, "status.members[].id")[3]).toBe("required");
    expect(row(md, "spec.podTemplate.nodeSelector")[1]).toBe("map[string]string");
    expect(row(md, "spec.podTemplate.resources.limits")[1]).toBe("map[string]int-or-string");
    expect(md).not.toContain("`metadata`");
  });

  it("lists every CEL rule with its message, including the version and storage rules", () => {
    const version = row(md, "spec.version");
    expect(version[3]).toContain("1 CEL rule");
    expect(md).toContain("version must be an etcd 3.5 or 3.6 release written MAJOR.MINOR.PATCH");
    expect(md).toContain("`self.matches('^3[.](5\\|6)[.][0-9]+$')`");
    expect(md).toContain(
      "storage.storageClassName is immutable: create a new EtcdCluster to move to another class",
    );
    expect(md).toContain("storage.ephemeral is immutable");
    expect(md).toContain("storage: set exactly one of size");
    const immutable = md.split("\n").find((l) => l.includes("storageClassName is immutable"))!;
    expect(immutable).toContain("`spec.storage.storageClassName`");
    expect(immutable).toContain("on update");
  });

  it("documents names, subresources and printer columns", () => {
    expect(md).toContain("short names `etcd`, categories `capstan`");
    expect(md).toContain(
      "`scale` (spec replicas `.spec.replicas`, status replicas `.status.replicas`, label selector `.status.selector`)",
    );
    const available = md.split("\n").find((l) => l.startsWith("| Available "))!;
    expect(available).toContain("`kubectl get -o wide`");
    expect(md.split("\n").find((l) => l.startsWith("| Phase "))).toContain("`kubectl get`");
  });

  it("pads every table's columns to one width, as Biome formats markdown", () => {
    const lines = md.split("\n");
    for (let i = 0; i < lines.length; i++) {
      if (!lines[i]!.startsWith("| ---")) continue;
      const widths = (l: string) => l.split(/(?<!\\)\|/).map((c) => c.length);
      let end = i + 1;
      while (lines[end]?.startsWith("|")) end++;
      for (const l of lines.slice(i - 1, end)) expect(widths(l), l).toEqual(widths(lines[i]!));
    }
  });
});
