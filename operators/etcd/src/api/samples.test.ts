// The EtcdClusters of samples/*.yaml are ones the schema accepts as far as it can be checked without an API
// server: every field declared, enums and patterns respected, and the CEL rules of spec.tls (their JavaScript
// equivalents) met. The real CEL runs in the e2e suite (e2e/suites/etcd/invalid-spec.test.ts).
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { type EtcdCluster, etcdClusterSchema } from "./etcd-cluster.ts";

const dir = new URL("../../samples/", import.meta.url);
const samples = readdirSync(dir)
  .filter((f) => f.endsWith(".yaml"))
  .flatMap((file) =>
    parseAllDocuments(readFileSync(new URL(file, dir), "utf8"))
      .map((d) => d.toJSON() as EtcdCluster | null)
      .filter((o): o is EtcdCluster => o?.kind === "EtcdCluster")
      .map((cluster) => [file, cluster] as const),
  );

/** The parts of a structural schema this test reads. */
type Schema = {
  type?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  enum?: unknown[];
  pattern?: string;
};

/** What of `value` the schema does not accept: undeclared fields, values outside an enum, unmatched patterns. */
function problems(schema: Schema, value: unknown, path: string): string[] {
  const { enum: allowed, pattern } = schema;
  if (allowed !== undefined && !allowed.includes(value)) return [`${path}: not in the enum`];
  if (pattern !== undefined && !new RegExp(pattern).test(String(value))) {
    return [`${path}: does not match ${pattern}`];
  }
  if (schema.type !== "object" || value === null || typeof value !== "object") return [];
  const props = schema.properties;
  return Object.entries(value).flatMap(([k, v]) => {
    const sub =
      props?.[k] ??
      (typeof schema.additionalProperties === "object" ? schema.additionalProperties : undefined);
    if (sub === undefined) return props === undefined ? [] : [`${path}.${k}: not declared`];
    return problems(sub, v, `${path}.${k}`);
  });
}

describe("samples/*.yaml", () => {
  it("holds the cert-manager sample", () => {
    expect(samples.map(([file]) => file)).toContain("etcdcluster-tls-cert-manager.yaml");
  });

  it.each(samples)("%s: every field of its EtcdCluster is declared and valid", (_file, cluster) => {
    expect(
      problems((etcdClusterSchema as unknown as Schema).properties!.spec!, cluster.spec, "spec"),
    ).toEqual([]);
  });

  it.each(samples)(
    "%s: at most one source per port, certManager not beside operatorManaged",
    (_file, cluster) => {
      const { peer, client } = cluster.spec.tls ?? {};
      for (const port of [peer, client]) {
        if (port === undefined) continue;
        const sources = [port.operatorManaged, port.secretRef, port.certManager].filter(
          (s) => s !== undefined,
        );
        expect(sources.length).toBeLessThanOrEqual(1);
      }
      const issued = (p: typeof peer) => p?.certManager !== undefined || p?.secretRef !== undefined;
      if (
        peer !== undefined &&
        client !== undefined &&
        (peer.certManager ?? client.certManager) !== undefined
      ) {
        expect(issued(peer) && issued(client)).toBe(true);
      }
    },
  );
});
