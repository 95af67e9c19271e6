// The capstan-operator library chart, rendered through each operator chart that uses it: the values a Helm user
// expects of an operator chart (cert-manager's set) reach the Deployment, the schema refuses what they must not
// hold, and every chart is built on the library (no template of its own for what the library renders).
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { findHelm, helmTemplate, helmTemplateError, type K8sObject, named } from "./chart.ts";
import { usesOperatorLibrary } from "./crd-files.ts";

const charts = resolve(dirname(fileURLToPath(import.meta.url)), "../../../charts");
const operatorCharts = readdirSync(charts).filter((c) => c.endsWith("-operator") && c !== "capstan-operator");
const helm = findHelm();

interface Container {
  name: string;
  image: string;
  args?: string[];
  env?: { name: string; value?: string }[];
  volumeMounts?: { name: string; mountPath: string }[];
  securityContext?: Record<string, unknown>;
}
interface PodSpec {
  containers: Container[];
  volumes?: { name: string }[];
  securityContext?: Record<string, unknown>;
  priorityClassName?: string;
  imagePullSecrets?: { name: string }[];
  topologySpreadConstraints?: unknown[];
  terminationGracePeriodSeconds?: number;
}
const pod = (objs: K8sObject[], chart: string) =>
  (named(objs, "Deployment", `ops-${chart}`) as unknown as { spec: { template: { spec: PodSpec } } }).spec
    .template.spec;

describe("charts built on the capstan-operator library chart", () => {
  it("are the three operator charts, each depending on the library and linking it", () => {
    expect(operatorCharts.sort()).toEqual(["etcd-operator", "prometheus-operator", "vault-operator"]);
    for (const chart of operatorCharts) {
      expect(readFileSync(join(charts, chart, "Chart.yaml"), "utf8"), chart).toContain(
        "repository: file://../capstan-operator",
      );
      expect(readFileSync(join(charts, chart, "charts/capstan-operator/Chart.yaml"), "utf8")).toContain(
        "type: library",
      );
    }
  });

  it("document every value of their schema in values.yaml (and capstan crd writes the schema only for them)", () => {
    for (const chart of operatorCharts) {
      const dir = join(charts, chart);
      expect(usesOperatorLibrary(dir), chart).toBe(true);
      const schema = JSON.parse(readFileSync(join(dir, "values.schema.json"), "utf8")) as {
        properties: Record<string, unknown>;
      };
      const values = parse(readFileSync(join(dir, "values.yaml"), "utf8")) as Record<string, unknown>;
      const documented = Object.keys(values).sort();
      const schemaKeys = Object.keys(schema.properties).filter((k) => k !== "capstan-operator");
      expect(documented, `${chart}: values.yaml keys vs values.schema.json`).toEqual(schemaKeys.sort());
    }
    const fixtureChart = fileURLToPath(new URL("../testdata/widget-operator/chart", import.meta.url));
    expect(usesOperatorLibrary(fixtureChart)).toBe(false);
  });

  describe.skipIf(helm === undefined).each(operatorCharts)("%s", (chart) => {
    const dir = join(charts, chart);

    it("renders the defaults: restricted contexts without a fixed uid, a grace period past the shutdown", () => {
      const spec = pod(helmTemplate(helm!, dir), chart);
      expect(spec.securityContext).toEqual({
        runAsNonRoot: true,
        seccompProfile: { type: "RuntimeDefault" },
      });
      expect(spec.containers[0]?.securityContext).toEqual({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ["ALL"] },
      });
      expect(spec.terminationGracePeriodSeconds).toBe(45);
      expect(spec.containers[0]?.image).toBe("capstan.local/" + chart + ":0.1.0");
      expect(spec.containers[0]?.args).toBeUndefined();
    });

    it("takes cert-manager's set of values: registry, digest, extras, spread, contexts, globals", () => {
      const objs = helmTemplate(helm!, dir, {
        values: {
          global: {
            imageRegistry: "mirror.example.com",
            imagePullSecrets: [{ name: "global-pull" }],
            priorityClassName: "global-priority",
            commonLabels: { team: "platform" },
          },
          image: { digest: `sha256:${"a".repeat(64)}` },
          imagePullSecrets: [{ name: "own-pull" }],
          extraArgs: ["--log-level=debug"],
          extraEnv: [{ name: "HTTPS_PROXY", value: "http://proxy:3128" }],
          extraVolumes: [{ name: "ca", configMap: { name: "ca-bundle" } }],
          extraVolumeMounts: [{ name: "ca", mountPath: "/etc/ssl/extra" }],
          topologySpreadConstraints: [{ maxSkew: 1, topologyKey: "topology.kubernetes.io/zone" }],
          // Helm merges maps: null removes a default key (here seccompProfile, e.g. for an older OpenShift SCC).
          podSecurityContext: { seccompProfile: null, fsGroup: 2000 },
          terminationGracePeriodSeconds: 90,
        },
      });
      const spec = pod(objs, chart);
      const c = spec.containers[0]!;
      expect(c.image).toBe(`mirror.example.com/capstan.local/${chart}@sha256:${"a".repeat(64)}`);
      expect(c.args).toEqual(["--log-level=debug"]);
      expect(c.env?.at(-1)).toEqual({ name: "HTTPS_PROXY", value: "http://proxy:3128" });
      expect(c.env?.map((e) => e.name)).toContain("LEADER_ELECTION_NAME");
      expect(c.volumeMounts).toEqual([{ name: "ca", mountPath: "/etc/ssl/extra" }]);
      expect(spec.volumes).toEqual([{ name: "ca", configMap: { name: "ca-bundle" } }]);
      expect(spec.topologySpreadConstraints).toHaveLength(1);
      expect(spec.securityContext).toEqual({ runAsNonRoot: true, fsGroup: 2000 });
      expect(spec.priorityClassName).toBe("global-priority");
      expect(spec.imagePullSecrets).toEqual([{ name: "global-pull" }, { name: "own-pull" }]);
      expect(spec.terminationGracePeriodSeconds).toBe(90);
      // Every object but the CRDs (generated copies of crds/*.yaml, without the chart's labels).
      const labelled = objs.filter((o) => o.kind !== "CustomResourceDefinition");
      expect(labelled.length).toBeGreaterThan(5);
      for (const o of labelled)
        expect(o.metadata.labels?.team, `${o.kind} ${o.metadata.name}`).toBe("platform");
    });

    it("keeps the metrics certificate volume beside extra volumes, and the chart's own priority over the global", () => {
      const spec = pod(
        helmTemplate(helm!, dir, {
          values: {
            metrics: { certSecret: "metrics-tls" },
            extraVolumes: [{ name: "tmp", emptyDir: {} }],
            extraVolumeMounts: [{ name: "tmp", mountPath: "/tmp" }],
            priorityClassName: "own",
            global: { priorityClassName: "global-priority" },
            image: { registry: "r.example.com", tag: "1.2.3" },
          },
        }),
        chart,
      );
      expect(spec.volumes?.map((v) => v.name)).toEqual(["metrics-certs", "tmp"]);
      expect(spec.containers[0]?.volumeMounts?.map((m) => m.name)).toEqual(["metrics-certs", "tmp"]);
      expect(spec.priorityClassName).toBe("own");
      expect(spec.containers[0]?.image).toBe(`r.example.com/capstan.local/${chart}:1.2.3`);
    });

    it("refuses values that cannot work, naming them", () => {
      expect(helmTemplateError(helm!, dir, { values: { image: { digest: "latest" } } })).toMatch(/digest/);
      expect(helmTemplateError(helm!, dir, { values: { extraArgs: ["log-level=debug"] } })).toMatch(
        /extraArgs/,
      );
      expect(helmTemplateError(helm!, dir, { values: { terminationGracePeriodSeconds: 10 } })).toMatch(
        /terminationGracePeriodSeconds/,
      );
      expect(helmTemplateError(helm!, dir, { values: { extraEnvs: [] } })).toMatch(/extraEnvs/);
    });
  });
});
