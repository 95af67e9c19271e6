// Table tests of the fake API server's protocol reading: URL paths, verbs, selectors and the size limit.
import { describe, expect, it } from "vitest";
import type { KubeObject } from "../api/object.ts";
import { Answer, checkSize, compileSelector, parsePath, patchKind, verbOf } from "./fake-api-protocol.ts";

describe("parsePath", () => {
  it.each([
    ["/api/v1/configmaps", "/api/v1/configmaps", "", "", ""],
    ["/api/v1/namespaces/ns/configmaps/cm", "/api/v1/configmaps", "ns", "cm", ""],
    ["/api/v1/namespaces/ns/pods/p/eviction", "/api/v1/pods", "ns", "p", "eviction"],
    ["/api/v1/namespaces/x/status", "/api/v1/namespaces", "", "x", "status"],
    ["/api/v1/namespaces/x", "/api/v1/namespaces", "", "x", ""],
    ["/apis/apps/v1/namespaces/ns/statefulsets/s/status", "/apis/apps/v1/statefulsets", "ns", "s", "status"],
  ])("%s", (path, collection, namespace, name, subresource) => {
    expect(parsePath(path)).toMatchObject({ collection, namespace, name, subresource });
  });
});

describe("verbOf", () => {
  it.each([
    ["GET", "x", undefined, undefined, "get"],
    ["GET", "", undefined, undefined, "list"],
    ["GET", "", "true", undefined, "watch"],
    ["GET", "", "1", undefined, "watch"],
    ["POST", "", undefined, undefined, "create"],
    ["PUT", "x", undefined, undefined, "update"],
    ["PATCH", "x", undefined, patchKind("application/apply-patch+yaml"), "apply"],
    ["PATCH", "x", undefined, patchKind("application/merge-patch+json"), "patch"],
    ["DELETE", "x", undefined, undefined, "delete"],
    ["DELETE", "", undefined, undefined, "deletecollection"],
  ] as const)("%s name=%j watch=%j patch=%j -> %s", (method, name, watch, patch, verb) => {
    expect(verbOf(method, name, watch, patch)).toBe(verb);
  });
});

describe("compileSelector", () => {
  const obj = {
    metadata: { name: "a", labels: { app: "etcd", tier: "db" } },
    spec: { nodeName: "n1" },
  } as KubeObject;
  it.each([
    [{}, true],
    [{ labelSelector: "app=etcd" }, true],
    [{ labelSelector: "app=vault" }, false],
    [{ labelSelector: "tier in (db,cache)" }, true],
    [{ fieldSelector: "metadata.name=a" }, true],
    [{ fieldSelector: "metadata.name!=a" }, false],
    [{ fieldSelector: "spec.nodeName==n1,metadata.name=a" }, true],
    [{ labelSelector: "app=etcd", fieldSelector: "spec.nodeName=n2" }, false],
  ])("%j -> %s", (query, match) => {
    expect(compileSelector(query)(obj)).toBe(match);
  });

  it("answers 400 for a selector it cannot read", () => {
    expect(() => compileSelector({ fieldSelector: "nonsense" })).toThrow(Answer);
    expect(() => compileSelector({ fieldSelector: "nonsense" })).toThrow(/invalid field selector/);
  });
});

describe("checkSize", () => {
  const big = "x".repeat(1024 * 1024);
  it.each([
    ["ConfigMap", { metadata: { name: "c" }, data: { k: "small" } }, false],
    ["ConfigMap", { metadata: { name: "c" }, data: { k: big } }, true],
    ["Secret", { metadata: { name: "s" }, data: { k: Buffer.from("small").toString("base64") } }, false],
    ["Secret", { metadata: { name: "s" }, data: { k: Buffer.from(`${big}x`).toString("base64") } }, true],
    ["Pod", { metadata: { name: "p" }, data: { k: big } }, false],
  ])("%s %#", (kind, obj, refused) => {
    const run = () => checkSize(kind, obj as KubeObject);
    if (refused) expect(run).toThrow(/Too long: must have at most 1048576 bytes/);
    else expect(run).not.toThrow();
  });
});
