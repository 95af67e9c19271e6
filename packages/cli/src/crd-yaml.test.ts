// The chart copy of a CRD: keep annotation added (beside the CRD's own annotations), behind crds.enabled, and for
// a CRD marked install-if-absent, only where the cluster has none of that name or has this release's own.
import type { CustomResourceDefinitionObject } from "@capstan/core";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { INSTALL_IF_ABSENT, renderChartCrd, renderCrdYaml } from "./crd-yaml.ts";

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

  it("renders an install-if-absent CRD only where none exists or this release made it", () => {
    const yaml = renderCrdYaml(crd({ [INSTALL_IF_ABSENT]: "true" }), "x");
    const out = renderChartCrd("widgets.example.dev.yaml", yaml, "@x/op");
    expect(body(out).metadata.annotations).toEqual({
      [INSTALL_IF_ABSENT]: "true",
      "helm.sh/resource-policy": "keep",
    });
    const guard = actions(out).join("\n");
    expect(guard).toContain(
      'lookup "apiextensions.k8s.io/v1" "CustomResourceDefinition" "" "widgets.example.dev"',
    );
    expect(guard).toContain('"meta.helm.sh/release-name" "" $existing) .Release.Name');
    expect(guard).toContain('"meta.helm.sh/release-namespace" "" $existing) .Release.Namespace');
    expect(guard).toContain("{{- if and .Values.crds.enabled (or (not $existing) $ours) }}");
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
