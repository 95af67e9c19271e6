// Type-checks the TypeScript code blocks of Markdown documents, so an example in the docs cannot drift from the
// API it shows. Each ```ts block is checked as a module of its own, with the repository's compiler options, as if
// it were a file in the document's directory (or in the directory a directive names), so `@capstan/*` imports
// resolve to the workspace packages' built declarations and relative imports to real files.
//
// A block that is a fragment gets its context from an HTML comment right before it, which Markdown does not
// render:
//
//   <!-- check in packages/core/examples
//   import { Manager } from "@capstan/core";
//   declare const hello: Greeting;
//   -->
//
// The first line may say `in <dir>` (relative to the repository root); the other lines are prepended to the block.
// `<!-- check: skip -->` leaves the next block out (for a block that is not TypeScript to be compiled, which should
// be rare and say why nearby).
import { readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";

/** One ```ts block of a document, with the context its directive gives. */
export interface DocBlock {
  /** The document, relative to the root. */
  doc: string;
  /** 1-based line of the block's first code line in the document. */
  line: number;
  code: string;
  /** Lines prepended from the directive (not shown in the document). */
  prelude: string;
  /** The directory the block is checked in (absolute). */
  dir: string;
  skip: boolean;
}

const FENCE = /^```(ts|typescript)\s*$/;
const DIRECTIVE = /^<!--\s*check\b:?\s*(.*)$/;

/** The ```ts blocks of `markdown` (the document at `doc`, relative to `root`). */
export function docBlocks(markdown: string, doc: string, root: string): DocBlock[] {
  const lines = markdown.split("\n");
  const blocks: DocBlock[] = [];
  let pending: { prelude: string[]; dir?: string; skip: boolean } | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    const directive = DIRECTIVE.exec(line);
    if (directive) {
      const first = (directive[1] ?? "").replace(/-->\s*$/, "").trim();
      const body: string[] = [];
      if (!line.includes("-->")) {
        for (i++; i < lines.length && !(lines[i] ?? "").includes("-->"); i++) body.push(lines[i] ?? "");
      }
      const inDir = /^in\s+(\S+)$/.exec(first);
      pending = {
        prelude: inDir || first === "" || first === "skip" ? body : [first, ...body],
        ...(inDir?.[1] === undefined ? {} : { dir: resolve(root, inDir[1]) }),
        skip: first === "skip",
      };
      continue;
    }
    if (FENCE.test(line)) {
      const start = i + 1;
      const code: string[] = [];
      for (i++; i < lines.length && !/^```\s*$/.test(lines[i] ?? ""); i++) code.push(lines[i] ?? "");
      blocks.push({
        doc,
        line: start + 1,
        code: code.join("\n"),
        prelude: (pending?.prelude ?? []).join("\n"),
        dir: pending?.dir ?? dirname(resolve(root, doc)),
        skip: pending?.skip ?? false,
      });
      pending = undefined;
      continue;
    }
    // Another language's block is skipped whole (it may show a directive or a ```ts fence as text), up to a
    // closing fence of the same length.
    const other = /^(`{3,})/.exec(line)?.[1];
    if (other !== undefined) for (i++; i < lines.length && (lines[i] ?? "").trimEnd() !== other; i++);
    // A directive applies to the block right after it (blank lines between are fine).
    if (line.trim() !== "") pending = undefined;
  }
  return blocks;
}

/** A compiler error in a block: where in the document, and what. */
export interface DocError {
  doc: string;
  /** 1-based document line (0 when the error is in the prelude). */
  line: number;
  message: string;
}

/**
 * Type-checks `blocks` in one program with `tsconfig` (the repository's base options, noEmit) plus vitest's globals
 * (examples of tests use `it` and `expect`). Returns every error, mapped back to the document's lines.
 */
export function checkDocBlocks(blocks: readonly DocBlock[], tsconfig: string): DocError[] {
  const config = ts.readConfigFile(tsconfig, (f) => ts.sys.readFile(f));
  if (config.error) throw new Error(ts.flattenDiagnosticMessageText(config.error.messageText, "\n"));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, dirname(tsconfig));
  const options: ts.CompilerOptions = {
    ...parsed.options,
    noEmit: true,
    declaration: false,
    sourceMap: false,
    types: [...(parsed.options.types ?? []), "vitest/globals"],
  };
  const virtual = new Map<string, { block: DocBlock; text: string; preludeLines: number }>();
  blocks
    .filter((b) => !b.skip)
    .forEach((block, n) => {
      const name = join(block.dir, `__doc_${n}_${block.doc.replace(/[^A-Za-z0-9]+/g, "_")}.ts`);
      const preludeLines = block.prelude === "" ? 0 : block.prelude.split("\n").length;
      // `export {}` makes every block a module: its names never clash with another block's.
      const text = `${block.prelude === "" ? "" : `${block.prelude}\n`}${block.code}\nexport {};\n`;
      virtual.set(name, { block, text, preludeLines });
    });
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (file, language, onError, create) => {
    const v = virtual.get(file);
    return v === undefined
      ? getSourceFile(file, language, onError, create)
      : ts.createSourceFile(file, v.text, language);
  };
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (file) => virtual.has(file) || fileExists(file);
  const readFile = host.readFile.bind(host);
  host.readFile = (file) => virtual.get(file)?.text ?? readFile(file);

  const program = ts.createProgram([...virtual.keys()], options, host);
  const errors: DocError[] = [];
  for (const d of ts.getPreEmitDiagnostics(program)) {
    const message = ts.flattenDiagnosticMessageText(d.messageText, "\n");
    const v = d.file === undefined ? undefined : virtual.get(d.file.fileName);
    if (v === undefined || d.file === undefined || d.start === undefined) {
      errors.push({ doc: d.file?.fileName ?? "(options)", line: 0, message });
      continue;
    }
    const at = d.file.getLineAndCharacterOfPosition(d.start).line; // 0-based line in the virtual file
    const inBlock = at - v.preludeLines;
    errors.push({ doc: v.block.doc, line: inBlock < 0 ? 0 : v.block.line + inBlock, message });
  }
  return errors;
}

/** The ```ts blocks of the documents `docs` (paths relative to `root`). */
export function blocksOf(root: string, docs: readonly string[]): DocBlock[] {
  return docs.flatMap((doc) =>
    docBlocks(readFileSync(resolve(root, doc), "utf8"), relative(root, resolve(root, doc)), root),
  );
}
