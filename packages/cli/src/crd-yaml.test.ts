// The chart copy of a CRD: a template with the keep annotation added (beside the CRD's own annotations), behind
// crds.enabled; and for a CRD marked install-if-absent, a plain file for Helm's crds/ directory (Helm creates it
// only where the cluster has none of that name, and never changes it).
import type { CustomResourceDefinitionObject } from "@capstan/core";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { chartCrdDir, INSTALL_IF_ABSENT, renderChartCrd, renderCrdYaml } from "./crd-yaml.ts";

const crd = (annotations?: Record<string, string>): CustomResourceDefinitionObject =>
  ({
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "widgets.example.dev", ...(annotations === undefined ? {} : { annotations }) },
    spec: {
      group: "example.dev",
      scope: "Namespaced",
      names: { kind: "Widget", plural: "widgets" },
      versions: [
        { name: "v1", served: true, storage: true, schema: { openAPIV3Schema: { type: "object" } } },
      ],
    },
  }) as CustomResourceDefinitionObject;

/** The template's lines that are not Helm actions, parsed: what Helm renders when every condition holds. */
const body = (text: string) =>
  parse(
    text
      .split("\n")
      .filter((l) => !l.startsWith("{{"))
      .join("\n"),
  ) as CustomResourceDefinitionObject;
const actions = (text: string) => text.split("\n").filter((l) => l.startsWith("{{"));

describe("renderChartCrd", () => {
  it("adds helm.sh/resource-policy: keep and puts the CRD behind crds.enabled", () => {
    const out = renderChartCrd("widgets.example.dev.yaml", renderCrdYaml(crd(), "x"), "@x/op");
    expect(body(out).metadata.annotations).toEqual({ "helm.sh/resource-policy": "keep" });
    expect(body(out).spec.names.kind).toBe("Widget");
    expect(actions(out).slice(1)).toEqual(["{{- if .Values.crds.enabled }}", "{{- end }}"]);
  });

  it("keeps a CRD's own annotations beside keep", () => {
    const out = renderChartCrd("widgets.example.dev.yaml", renderCrdYaml(crd({ a: "1" }), "x"), "@x/op");
    expect(body(out).metadata).toEqual({
      name: "widgets.example.dev",
      annotations: { a: "1", "helm.sh/resource-policy": "keep" },
    });
    expect(out).not.toContain("lookup");
  });

  it("writes an install-if-absent CRD for Helm's crds/ as it is: no template, no keep, a header saying what Helm does", () => {
    const yaml = renderCrdYaml(crd({ [INSTALL_IF_ABSENT]: "true" }), "x");
    expect(chartCrdDir(crd({ [INSTALL_IF_ABSENT]: "true" }))).toBe("crds");
    expect(chartCrdDir(crd({ a: "1" }))).toBe("templates/crds");
    expect(chartCrdDir(crd())).toBe("templates/crds");
    const out = renderChartCrd("widgets.example.dev.yaml", yaml, "@x/op");
    // crds/ is not rendered: any {{ }} would reach the API server as it is.
    expect(out).not.toContain("{{");
    expect(out).not.toContain("lookup");
    expect(parse(out)).toEqual(crd({ [INSTALL_IF_ABSENT]: "true" }));
    expect(out.endsWith(yaml)).toBe(true);
    const header = out.slice(0, out.length - yaml.length);
    expect(header).toMatch(/^(# [^\n]*\n)+$/);
    expect(header).toContain("crds/widgets.example.dev.yaml of @x/op");
    expect(header).toContain("do not edit");
    expect(header).toContain("only where the cluster has no CRD of this name");
    expect(header).toContain("never");
  });

  it("gives an install-if-absent CRD the static labels it is given (crds/ cannot include a template)", () => {
    const yaml = renderCrdYaml(crd({ [INSTALL_IF_ABSENT]: "true" }), "x");
    const labels = { "app.kubernetes.io/name": "x-operator", "app.kubernetes.io/component": "crds" };
    const out = renderChartCrd("widgets.example.dev.yaml", yaml, "@x/op", {
      labels: "capstan-operator.crdLabels",
      staticLabels: labels,
    });
    expect(out).not.toContain("{{");
    expect((parse(out) as CustomResourceDefinitionObject).metadata).toEqual({
      name: "widgets.example.dev",
      labels,
      annotations: { [INSTALL_IF_ABSENT]: "true" },
    });
    const own = renderCrdYaml(
      {
        ...crd(),
        metadata: {
          name: "widgets.example.dev",
          labels: { b: "2" },
          annotations: { [INSTALL_IF_ABSENT]: "true" },
        },
      },
      "x",
    );
    expect(() => renderChartCrd("w.yaml", own, "@x/op", { staticLabels: labels })).toThrow(
      /metadata.labels is set/,
    );
  });

  it("labels the CRD with the named template when asked (charts on the capstan-operator library)", () => {
    const out = renderChartCrd("widgets.example.dev.yaml", renderCrdYaml(crd({ a: "1" }), "x"), "@x/op", {
      labels: "capstan-operator.crdLabels",
    });
    expect(out).toContain(
      'metadata:\n  labels:\n    {{- include "capstan-operator.crdLabels" . | nindent 4 }}\n  name: widgets.example.dev\n',
    );
    const parsed = body(out.replace(/ {4}\{\{-[^\n]*\n/, ""));
    expect(parsed.metadata.annotations).toEqual({ a: "1", "helm.sh/resource-policy": "keep" });
    const own = renderCrdYaml(
      { ...crd(), metadata: { name: "widgets.example.dev", labels: { b: "2" } } },
      "x",
    );
    expect(() => renderChartCrd("w.yaml", own, "@x/op", { labels: "t" })).toThrow(/metadata.labels is set/);
    expect(renderChartCrd("w.yaml", own, "@x/op")).not.toContain("include");
  });

  it("refuses YAML without a top-level metadata", () => {
    expect(() => renderChartCrd("w.yaml", "kind: X\n", "@x/op")).toThrow(/top-level "metadata:"/);
  });
});
