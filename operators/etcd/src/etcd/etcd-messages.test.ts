// Table tests of reading etcd's JSON gateway: uint64 as decimal strings, enums as names or numbers, missing fields.
import { describe, expect, it } from "vitest";
import { memberIdToHex, num, parseAlarms, parseHeader, parseJson, parseMembers } from "./etcd-messages.ts";

describe("num", () => {
  it.each([
    [42, 0, 42],
    ["123456789012", 0, 123456789012],
    ["", 7, 7],
    [undefined, 7, 7],
    [null, 0, 0],
  ])("%j (fallback %j) -> %j", (v, fallback, expected) => {
    expect(num(v, fallback)).toBe(expected);
  });
});

describe("parseHeader", () => {
  it.each([
    [
      {
        cluster_id: "14841639068965178418",
        member_id: "10276657743932975437",
        revision: "12",
        raft_term: "3",
      },
      {
        clusterId: "14841639068965178418",
        memberId: "10276657743932975437",
        revision: 12,
        raftTerm: 3,
      },
    ],
    [undefined, { clusterId: "0", memberId: "0", revision: 0, raftTerm: 0 }],
  ])("%j", (v, expected) => {
    expect(parseHeader(v)).toEqual(expected);
  });
});

describe("parseAlarms", () => {
  it.each([
    ["names", [{ memberID: "1", alarm: "NOSPACE" }], [{ memberId: "1", alarm: "NOSPACE" }]],
    ["enum numbers", [{ memberID: 2, alarm: 2 }], [{ memberId: "2", alarm: "CORRUPT" }]],
    [
      "NONE dropped",
      [
        { memberID: "1", alarm: "NONE" },
        { memberID: "1", alarm: 0 },
      ],
      [],
    ],
    ["unknown number kept", [{ memberID: "1", alarm: 9 }], [{ memberId: "1", alarm: "9" }]],
    ["not a list", undefined, []],
  ])("%s", (_, v, expected) => {
    expect(parseAlarms(v)).toEqual(expected);
  });
});

describe("parseMembers", () => {
  it("reads a started member and one that never started", () => {
    expect(
      parseMembers([
        { ID: "1", name: "a", peerURLs: ["https://a:2380"], clientURLs: ["https://a:2379"] },
        { ID: "2", peerURLs: ["https://b:2380"], isLearner: true },
        "junk",
      ]),
    ).toEqual([
      { id: "1", name: "a", peerURLs: ["https://a:2380"], clientURLs: ["https://a:2379"], isLearner: false },
      { id: "2", name: "", peerURLs: ["https://b:2380"], clientURLs: [], isLearner: true },
    ]);
  });
});

describe("parseJson and memberIdToHex", () => {
  it.each([
    ['{"a":1}', { a: 1 }],
    ["<html>bad gateway</html>\n", { message: "<html>bad gateway</html>" }],
    ["42", { message: "42" }],
  ])("%j", (text, expected) => {
    expect(parseJson(text)).toEqual(expected);
  });
  it("prints member IDs as etcdctl does", () => {
    expect(memberIdToHex("10276657743932975437")).toBe("8e9e05c52164694d");
  });
});
