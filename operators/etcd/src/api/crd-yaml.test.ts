import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { renderCrds } from "./crd-yaml.ts";
import { etcdClusterCrd } from "./etcd-cluster.ts";

describe("committed CRD YAML", () => {
  it.each(renderCrds())(
    "crds/$file matches the schema (run npm run gen:crd to refresh)",
    ({ file, yaml }) => {
      const committed = readFileSync(new URL(`../../crds/${file}`, import.meta.url), "utf8");
      expect(committed).toBe(yaml);
    },
  );

  it("parses back to the CRD object", () => {
    const [first] = renderCrds();
    expect(parse(first!.yaml)).toEqual(etcdClusterCrd());
  });
});
