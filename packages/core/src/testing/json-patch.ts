// JSON Patch (RFC 6902) and JSON Merge Patch (RFC 7386) as the fake API server applies them to stored objects.

/** A patch that cannot be applied; `test` is true when a `test` operation failed (a stale read). */
export class PatchError extends Error {
  readonly test: boolean;
  constructor(message: string, test = false) {
    super(message);
    this.name = "PatchError";
    this.test = test;
  }
}

interface Operation {
  op: "add" | "remove" | "replace" | "move" | "copy" | "test";
  path: string;
  from?: string;
  value?: unknown;
}

type Container = Record<string, unknown> | unknown[];

/** Applies a JSON Patch to a copy of `doc`; throws {@link PatchError} naming the operation that failed. */
export function applyJsonPatch(doc: unknown, patch: unknown): unknown {
  if (!Array.isArray(patch)) throw new PatchError("a JSON patch must be an array of operations");
  let out = structuredClone(doc);
  for (const [i, raw] of patch.entries()) {
    const op = raw as Operation;
    if (typeof op !== "object" || op === null || typeof op.path !== "string") {
      throw new PatchError(`operation ${i}: needs "op" and "path"`);
    }
    switch (op.op) {
      case "add":
        out = add(out, op.path, structuredClone(op.value));
        break;
      case "remove":
        out = remove(out, op.path);
        break;
      case "replace":
        out = replace(out, op.path, structuredClone(op.value));
        break;
      case "move": {
        const value = get(out, requireFrom(op, i));
        out = add(remove(out, requireFrom(op, i)), op.path, value);
        break;
      }
      case "copy":
        out = add(out, op.path, structuredClone(get(out, requireFrom(op, i))));
        break;
      case "test": {
        let actual: unknown;
        try {
          actual = get(out, op.path);
        } catch {
          actual = undefined;
        }
        // Kubernetes reads a missing field as null for "test" (e.g. "no finalizers yet").
        if (!deepEqual(actual ?? null, op.value ?? null)) {
          throw new PatchError(`testing value ${op.path} failed`, true);
        }
        break;
      }
      default:
        throw new PatchError(`operation ${i}: unknown op "${String((op as { op: unknown }).op)}"`);
    }
  }
  return out;
}

/** JSON Merge Patch: objects merge recursively, null deletes a field, anything else replaces. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== "object" || patch === null || Array.isArray(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = applyMergePatch(out[k], v);
  }
  return out;
}

/** Structural equality of JSON values. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return (
    ka.length === kb.length &&
    ka.every((k) => deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
  );
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function requireFrom(op: Operation, i: number): string {
  if (typeof op.from !== "string") throw new PatchError(`operation ${i} (${op.op}): needs "from"`);
  return op.from;
}

function tokens(pointer: string): string[] {
  if (pointer === "") return [];
  if (!pointer.startsWith("/")) throw new PatchError(`path "${pointer}" must start with "/"`);
  return pointer
    .slice(1)
    .split("/")
    .map((t) => t.replaceAll("~1", "/").replaceAll("~0", "~"));
}

/** The container holding the last token of `pointer`, and that token. */
function parent(doc: unknown, pointer: string): { container: Container; key: string } {
  const path = tokens(pointer);
  const key = path.pop();
  if (key === undefined) throw new PatchError("the root cannot be the target here");
  let node: unknown = doc;
  for (const t of path) {
    node = child(node, t, pointer);
  }
  if (typeof node !== "object" || node === null)
    throw new PatchError(`path ${pointer}: parent is not a container`);
  return { container: node as Container, key };
}

function child(node: unknown, token: string, pointer: string): unknown {
  if (Array.isArray(node)) {
    const i = index(token, node.length - 1, pointer);
    return node[i];
  }
  if (isObject(node) && token in node) return node[token];
  throw new PatchError(`path ${pointer} does not exist`);
}

function index(token: string, max: number, pointer: string): number {
  if (!/^(0|[1-9][0-9]*)$/.test(token))
    throw new PatchError(`path ${pointer}: "${token}" is not an array index`);
  const i = Number(token);
  if (i > max) throw new PatchError(`path ${pointer}: index ${i} is out of range`);
  return i;
}

function get(doc: unknown, pointer: string): unknown {
  let node = doc;
  for (const t of tokens(pointer)) node = child(node, t, pointer);
  return node;
}

function add(doc: unknown, pointer: string, value: unknown): unknown {
  if (pointer === "") return value;
  const { container, key } = parent(doc, pointer);
  if (Array.isArray(container)) {
    const i = key === "-" ? container.length : index(key, container.length, pointer);
    container.splice(i, 0, value);
  } else {
    container[key] = value;
  }
  return doc;
}

/**
 * "replace" as the API server applies it (evanphx/json-patch v4): an object member that does not exist yet is set,
 * where RFC 6902 would refuse. Clients rely on it: Vault's Kubernetes service registration replaces
 * /metadata/labels/vault-active on a pod that never had the label. A missing parent, or an array index out of range,
 * is still an error.
 */
function replace(doc: unknown, pointer: string, value: unknown): unknown {
  if (pointer === "") return value;
  const { container } = parent(doc, pointer);
  if (Array.isArray(container)) return add(remove(doc, pointer), pointer, value);
  return add(doc, pointer, value);
}

function remove(doc: unknown, pointer: string): unknown {
  const { container, key } = parent(doc, pointer);
  if (Array.isArray(container)) {
    container.splice(index(key, container.length - 1, pointer), 1);
  } else {
    if (!(key in container)) throw new PatchError(`path ${pointer} does not exist`);
    delete container[key];
  }
  return doc;
}
