// The Helm chart (charts/__name__-operator): its CRD copy and values schema are what `capstan crd` generates;
// where helm is installed it lints clean, its pods pass the Pod Security "restricted" profile, its RBAC grants
// what the operator needs for its kinds and no more in namespaced mode, and its alerts and dashboard use only
// metrics the operator exports.
import { fileURLToPath } from "node:url";
import { formatDrift } from "@capstan/cli";
import {
  chartCrdDrift,
  crdPermissions,
  dashboardQueries,
  findHelm,
  helmLint,
  helmTemplate,
  missingPermissions,
  monitoringProblems,
  operatorSeriesNames,
  podSpecs,
  renderedDashboard,
  restrictedViolations,
  ruleExpressions,
} from "@capstan/cli/chart";
import { describe, expect, it } from "vitest";
import { crds } from "./api/crds.ts";

const packageDir = fileURLToPath(new URL("../", import.meta.url));
const chartDir = fileURLToPath(new URL("../../../charts/__name__-operator/", import.meta.url));
const helm = findHelm();

describe("the chart", () => {
  it("holds the CRD copies `capstan crd` writes from the schema", async () => {
    expect((await chartCrdDrift(packageDir)).map((d) => formatDrift(d, packageDir))).toEqual([]);
  });

  describe.skipIf(helm === undefined)("with helm", () => {
    it.each([[], ["watchNamespace=apps"]])(
      "lints, renders restricted pods and RBAC for its kinds (%s)",
      (...set) => {
        helmLint(helm!, chartDir, set);
        const objs = helmTemplate(helm!, chartDir, { set });
        expect(podSpecs(objs).flatMap((p) => restrictedViolations(p.owner, p.spec))).toEqual([]);
        expect(missingPermissions(objs, crdPermissions(crds))).toEqual([]);
        expect(objs.some((o) => o.kind === (set.length === 0 ? "ClusterRole" : "Role"))).toBe(true);
      },
    );

    it("has alerts and a dashboard that parse and use only metrics the operator exports", async () => {
      const objs = helmTemplate(helm!, chartDir, {
        set: ["serviceMonitor.enabled=true", "prometheusRule.enabled=true", "dashboard.enabled=true"],
      });
      const known = await operatorSeriesNames(() => undefined); // core's metrics: the operator adds none yet
      const queries = [
        ...ruleExpressions(objs),
        ...dashboardQueries(renderedDashboard(objs, "__name__-operator").json),
      ];
      expect(queries.length).toBeGreaterThan(4);
      expect(monitoringProblems(queries, known)).toEqual([]);
    });
  });
});
