// Table tests of which requests a fake API server script matches, and of the order scripts reply in.
import { describe, expect, it } from "vitest";
import { ConfigMap, Secret } from "../api/kinds.ts";
import { matches, ScriptBook } from "./fake-api-scripts.ts";
import type { RecordedRequest, RequestMatch } from "./fake-api-types.ts";

const req: RecordedRequest = {
  verb: "update",
  method: "PUT",
  path: "/api/v1/namespaces/ns/configmaps/cm/status",
  query: {},
  apiVersion: "v1",
  resource: "configmaps",
  kind: "ConfigMap",
  namespace: "ns",
  name: "cm",
  subresource: "status",
  patchType: undefined,
  body: undefined,
  userAgent: "",
  status: 0,
};

describe("matches", () => {
  it.each<[string, RequestMatch, boolean]>([
    ["empty match", {}, true],
    ["verb", { verb: "update" }, true],
    ["other verb", { verb: "create" }, false],
    ["one of verbs", { verb: ["create", "update"] }, true],
    ["kind name", { kind: "ConfigMap" }, true],
    ["resource", { kind: "configmaps" }, true],
    ["Kind", { kind: ConfigMap }, true],
    ["other Kind", { kind: Secret }, false],
    ["namespace and name", { namespace: "ns", name: "cm" }, true],
    ["other name", { name: "x" }, false],
    ["main resource only", { subresource: "" }, false],
    ["status", { subresource: "status" }, true],
    ["where", { where: (r) => r.path.endsWith("/status") }, true],
  ])("%s", (_, m, expected) => {
    expect(matches(m, req)).toBe(expected);
  });
});

describe("ScriptBook", () => {
  it("replies with the first script that gives a reply, counting hits and times", async () => {
    const book = new ScriptBook();
    const pass = book.add({ verb: "update" }, 0, () => undefined, undefined);
    const once = book.add({ kind: "ConfigMap" }, 0, () => ({ status: 409 }), 1);
    const signal = new AbortController().signal;
    expect(await book.reply(req, signal)).toEqual({ status: 409 });
    expect(await book.reply(req, signal)).toBeUndefined();
    expect([pass.hits, once.hits]).toEqual([2, 1]);
    pass.remove();
    expect(await book.reply(req, signal)).toBeUndefined();
    expect(pass.hits).toBe(2);
  });
});
