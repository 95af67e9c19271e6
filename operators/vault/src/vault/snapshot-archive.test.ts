// The snapshot check on archives made here the way raft-snapshot makes them (gzip'd ustar: meta.json, state.bin,
// SHA256SUMS, SHA256SUMS.sealed): a whole one is read (index, term, every file's sha256), and each kind of damage is
// refused with what is wrong. (A real Vault's snapshot is checked in snapshot.real.test.ts.)
import { createHash, randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { parseSums, verifySnapshotStream } from "./snapshot-archive.ts";

/** A ustar archive of `files` (what Go's archive/tar writes for short names), with its two end blocks. */
function tar(files: { name: string; data: Buffer }[]): Buffer {
  const blocks: Buffer[] = [];
  for (const f of files) {
    const h = Buffer.alloc(512);
    h.write(f.name, 0, 100, "utf8");
    h.write("0000600\0", 100);
    h.write("0000000\0", 108);
    h.write("0000000\0", 116);
    h.write(`${f.data.length.toString(8).padStart(11, "0")}\0`, 124);
    h.write("00000000000\0", 136);
    h.write("        ", 148);
    h.write("0", 156);
    h.write("ustar\0", 257);
    h.write("00", 263);
    let sum = 0;
    for (const b of h) sum += b;
    h.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148);
    blocks.push(h, f.data, Buffer.alloc((512 - (f.data.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}

const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");

function snapshot(
  options: {
    state?: Buffer;
    sums?: (files: Record<string, Buffer>) => string;
    omit?: string;
    meta?: unknown;
  } = {},
): Buffer {
  const files: Record<string, Buffer> = {
    "meta.json": Buffer.from(
      JSON.stringify(options.meta ?? { Version: 1, ID: "2-42-1", Index: 42, Term: 2 }),
    ),
    "state.bin": options.state ?? randomBytes(70_000),
  };
  const sums =
    options.sums?.(files) ??
    Object.entries(files)
      .map(([n, d]) => `${sha(d)}  ${n}\n`)
      .join("");
  const all = { ...files, SHA256SUMS: Buffer.from(sums), "SHA256SUMS.sealed": randomBytes(64) };
  return gzipSync(
    tar(
      Object.entries(all)
        .filter(([n]) => n !== options.omit)
        .map(([name, data]) => ({ name, data })),
    ),
  );
}

const check = (b: Buffer) => verifySnapshotStream(Readable.from([b.subarray(0, 1000), b.subarray(1000)]));

describe("verifySnapshotStream", () => {
  it("reads a whole snapshot: raft's index and term, and every file's size and sha256", async () => {
    const state = randomBytes(150_000);
    const got = await check(snapshot({ state }));
    expect(got.index).toBe(42);
    expect(got.term).toBe(2);
    expect(got.files.map((f) => f.name)).toEqual([
      "SHA256SUMS",
      "SHA256SUMS.sealed",
      "meta.json",
      "state.bin",
    ]);
    expect(got.files.find((f) => f.name === "state.bin")).toEqual({
      name: "state.bin",
      size: state.length,
      sha256: sha(state),
    });
  });

  it("refuses a state.bin whose sha256 is not what SHA256SUMS says", async () => {
    await expect(
      check(
        snapshot({
          sums: (f) => `${sha(f["meta.json"] ?? Buffer.alloc(0))}  meta.json\n${"0".repeat(64)}  state.bin\n`,
        }),
      ),
    ).rejects.toThrow(/state.bin has sha256 [0-9a-f]{64}, its SHA256SUMS says 0{64}/);
  });

  it("refuses a snapshot without SHA256SUMS, or whose SHA256SUMS does not list state.bin", async () => {
    await expect(check(snapshot({ omit: "SHA256SUMS" }))).rejects.toThrow(/has no SHA256SUMS/);
    await expect(
      check(snapshot({ sums: (f) => `${sha(f["meta.json"] ?? Buffer.alloc(0))}  meta.json\n` })),
    ).rejects.toThrow(/SHA256SUMS does not list state.bin/);
  });

  it("refuses a listed file that is missing", async () => {
    await expect(check(snapshot({ omit: "state.bin" }))).rejects.toThrow(/lacks state.bin/);
  });

  it("refuses a truncated stream and what is not gzip", async () => {
    const whole = snapshot({ state: randomBytes(200_000) });
    await expect(check(whole.subarray(0, Math.floor(whole.length / 2)))).rejects.toThrow(
      /not a whole gzip'd tar/,
    );
    await expect(check(Buffer.from('{"errors":["permission denied"]}'))).rejects.toThrow(
      /not a whole gzip'd tar/,
    );
  });

  it("refuses a meta.json without Index and Term", async () => {
    await expect(check(snapshot({ meta: { Version: 1 } }))).rejects.toThrow(/no Index and Term/);
  });
});

describe("parseSums", () => {
  it("reads sha256sum's format and refuses another", () => {
    expect(parseSums(`${"a".repeat(64)}  meta.json\n\n`)).toEqual(new Map([["meta.json", "a".repeat(64)]]));
    expect(() => parseSums("abc meta.json")).toThrow(/not "<sha256> {2}<file>"/);
  });
});
