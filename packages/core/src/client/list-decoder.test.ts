import { describe, expect, it } from "vitest";
import { ListDecoder } from "./list-decoder.ts";

type Item = { metadata: { name: string }; data?: Record<string, string> };

/** Feeds `text` to a decoder in pieces of `size` bytes; returns the batches and the envelope. */
function decode(text: string, size: number, batchChars = 1, dropManagedFields = false) {
  const batches: Item[][] = [];
  const decoder = new ListDecoder<Item>((items) => batches.push(items), { batchChars, dropManagedFields });
  const bytes = Buffer.from(text, "utf8");
  for (let i = 0; i < bytes.length; i += size) decoder.write(bytes.subarray(i, i + size));
  const envelope = decoder.end();
  return { batches, items: batches.flat(), envelope, count: decoder.items };
}

const item = (name: string, data: Record<string, string> = {}): Item => ({ metadata: { name }, data });

// Values that a naive scanner would take for structure: brackets, quotes, backslashes, the word "items",
// multi-byte characters (split across chunks when fed byte by byte).
const tricky: Item[] = [
  item("a", { json: '{"items":[1,2]}', close: "}]}", quote: 'say "hi"' }),
  item("b", { backslash: "C:\\dir\\", both: '\\"', brackets: "[[{{" }),
  item("c", { unicode: "grüße ✓ 🙂", escaped: "\u0000\n\t" }),
  item("items"),
];

const list = (items: Item[], metadata: object = { resourceVersion: "42" }) =>
  JSON.stringify({ kind: "ConfigMapList", apiVersion: "v1", metadata, items });

describe("ListDecoder", () => {
  it("yields every item and the envelope, whatever the chunk boundaries", () => {
    const text = list(tricky, { resourceVersion: "42", continue: "tok", remainingItemCount: 3 });
    for (const size of [1, 2, 3, 5, 7, 16, 64, text.length]) {
      const { items, envelope, count } = decode(text, size);
      expect(items, `chunks of ${size}`).toEqual(tricky);
      expect(count).toBe(tricky.length);
      expect(envelope).toEqual({
        kind: "ConfigMapList",
        apiVersion: "v1",
        metadata: { resourceVersion: "42", continue: "tok", remainingItemCount: 3 },
      });
    }
  });

  it("parses complete items in batches of at least batchChars while the list arrives", () => {
    const items = Array.from({ length: 100 }, (_, i) => item(`cm-${i}`, { v: "x".repeat(50) }));
    const text = list(items);
    const seenBeforeEnd: number[] = [];
    const batches: Item[][] = [];
    const decoder = new ListDecoder<Item>((b) => batches.push(b), { batchChars: 1000 });
    const bytes = Buffer.from(text);
    for (let i = 0; i < bytes.length; i += 300) {
      decoder.write(bytes.subarray(i, i + 300));
      seenBeforeEnd.push(decoder.items);
    }
    decoder.end();
    expect(batches.flat()).toEqual(items);
    expect(batches.length).toBeGreaterThan(5); // not one parse at the end
    expect(seenBeforeEnd[Math.floor(seenBeforeEnd.length / 2)]).toBeGreaterThan(20);
    for (const b of batches.slice(0, -1)) expect(JSON.stringify(b).length).toBeGreaterThanOrEqual(1000);
  });

  it("finds items wherever the key is, and ignores an items key or value elsewhere", () => {
    const text = JSON.stringify({
      metadata: { resourceVersion: "7", items: ["not", "these"] },
      kind: "items",
      note: ["items"],
      count: 2,
      items: [item("x"), item("y")],
      after: { items: [item("z")] },
    });
    const { items, envelope } = decode(text, 3);
    expect(items.map((i) => i.metadata.name)).toEqual(["x", "y"]);
    expect(envelope).toEqual({
      metadata: { resourceVersion: "7", items: ["not", "these"] },
      kind: "items",
      note: ["items"],
      count: 2,
      after: { items: [item("z")] },
    });
  });

  it("handles an empty list, a list without items, and whitespace between tokens", () => {
    expect(decode(list([]), 4).items).toEqual([]);
    const none = decode(JSON.stringify({ kind: "ConfigMapList", metadata: { resourceVersion: "3" } }), 4);
    expect(none.items).toEqual([]);
    expect(none.envelope.metadata?.resourceVersion).toBe("3");
    const spaced =
      '{ "metadata" : { "resourceVersion" : "9" } ,\n "items" : [ {"metadata":{"name":"a"}} ,\n {"metadata":{"name":"b"}} ] }';
    const { items, envelope } = decode(spaced, 2);
    expect(items.map((i) => i.metadata.name)).toEqual(["a", "b"]);
    expect(envelope.metadata?.resourceVersion).toBe("9");
  });

  it("fails on a body cut short or not a JSON object, and on an invalid item", () => {
    const text = list(tricky);
    expect(() => decode(text.slice(0, text.length - 10), 8)).toThrow(/ended early/);
    expect(() => decode(text.slice(0, 40), 8)).toThrow(/ended early/);
    expect(() => decode("[1,2]", 1)).toThrow(/not a JSON object/);
    expect(() => decode("", 1)).toThrow(/not a JSON object/);
    expect(() => decode('{"items":[{"metadata":{"name":"a"}},{"metadata":{name:"b"}}]}', 4)).toThrow(
      SyntaxError,
    );
  });

  describe("with dropManagedFields", () => {
    const fields = [
      { manager: "kubectl", operation: "Update", fieldsV1: { "f:data": { "f:a": {} }, 'k:{"x":"]}"}': {} } },
      { manager: "m2", fieldsV1: { "f:metadata": { "f:labels": { ".": {} } } } },
    ];
    /** Items whose metadata has managedFields first, last, alone, null, and not at all. */
    const raw = [
      { metadata: { managedFields: fields, name: "first", labels: { a: "b" } }, data: { v: "1" } },
      { metadata: { name: "last", uid: "u", managedFields: fields }, data: { managedFields: "kept" } },
      { metadata: { managedFields: fields } },
      { metadata: { name: "null", managedFields: null, namespace: "ns" } },
      { metadata: { name: "none", annotations: { managedFields: "[1]" } }, spec: { managedFields: [1, 2] } },
      {
        data: { x: "y" },
        metadata: { managedFields: [], name: "after-data" },
        status: { metadata: { managedFields: [3] } },
      },
    ];
    const expected = raw.map((o) => {
      const { managedFields: _, ...metadata } = o.metadata as Record<string, unknown>;
      return { ...o, metadata };
    });

    it("leaves metadata.managedFields out of every item, and nothing else", () => {
      const compact = list(raw as never);
      const spaced = JSON.stringify(
        { kind: "List", metadata: { resourceVersion: "5" }, items: raw },
        null,
        2,
      );
      for (const text of [compact, spaced]) {
        for (const size of [1, 3, 11, 64, text.length]) {
          for (const batchChars of [1, 200, 1_000_000]) {
            const { items } = decode(text, size, batchChars, true);
            expect(items, `chunks of ${size}, batches of ${batchChars}`).toEqual(expected);
          }
        }
      }
    });

    it("keeps managedFields when not asked to drop them", () => {
      expect(decode(list(raw as never), 7).items).toEqual(raw);
    });
  });
});
