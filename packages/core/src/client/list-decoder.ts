// Decodes a list response (`{"kind":..., "metadata":{...}, "items":[...]}`) while it arrives, instead of
// after its last byte: the text is scanned for the boundaries of `items` entries (JSON structure only, no
// value decoded), and every batch of complete items is parsed with one JSON.parse call and handed on.
// Two gains over reading the whole body and parsing it once:
// - time: parsing overlaps the transfer, which the API server paces (it encodes as it sends);
// - memory: the body is never held whole, neither as bytes nor as one string, and the caller's transform
//   (e.g. dropping managedFields) runs on each batch, so untransformed objects never pile up.
// Batches are 256 KiB by default: large enough that each batch's fixed costs (one copy of its text, one
// JSON.parse call, one array) vanish beside the parse, small enough that the text waiting stays small. What
// JSON.parse builds is young whatever the size of its source (Node 24's V8 does not pretenure it, measured),
// so the objects a cache keeps are copied by the young-generation collector before they settle: hence the
// operator images' 4 MiB young generation (docs/performance.md, "Node.js heap flags").

import { StringDecoder } from "node:string_decoder";

/** What a list response holds besides its items. */
export interface ListEnvelope {
  kind?: string;
  apiVersion?: string;
  metadata?: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  [key: string]: unknown;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

/** Where the scanner is: before `items`' array, inside it, or after it. */
const HEAD = 0;
const ITEMS = 1;
const TAIL = 2;

export class ListDecoder<T> {
  private readonly onItems: (items: T[]) => void;
  private readonly batchChars: number;
  private readonly utf8 = new StringDecoder("utf8");
  /** Text outside `items` (the envelope), with `[]` in place of the array. */
  private envelope = "";
  /** Text of `items` not parsed yet; its first `complete` characters end with a whole item. */
  private pending = "";
  private complete = 0;
  private phase = HEAD;
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** Start of the string being read at depth 1 (in `envelope`), to find the `"items"` key. */
  private keyStart = -1;
  /** The last thing closed at depth 1 was the string "items". */
  private afterItemsKey = false;
  private count = 0;

  // Cutting `metadata.managedFields` out of items before they are parsed (positions count characters of
  // `pending` followed by the text being scanned):
  private readonly dropManagedFields: boolean;
  /** The last character outside strings that is not whitespace (QUOTE after a string). */
  private prev = 0;
  /** Where the last comma was. */
  private prevComma = -1;
  /** Where the string being read opened, when it may be a key of an item or of its metadata; else -1. */
  private stringAt = -1;
  private stringIsKey = false;
  /** That string is the first key of its object. */
  private stringIsFirst = false;
  /** The last key of an item was "metadata"; inside that metadata object. */
  private metadataKey = false;
  private inMetadata = false;
  /** Where the managedFields member being cut begins (its comma, or its key if it is first); else -1. */
  private cutFrom = -1;
  private cutIsFirst = false;
  private cutValueEnded = false;
  /** Ranges [from, to) of `pending` left out of the parse. */
  private cuts: number[] = [];

  /**
   * @param onItems receives each batch of parsed items, in order.
   * @param options.batchChars parse once at least this many characters of complete items are waiting.
   * @param options.dropManagedFields leave each item's `metadata.managedFields` out (never parsed).
   */
  constructor(
    onItems: (items: T[]) => void,
    options: { batchChars?: number; dropManagedFields?: boolean } = {},
  ) {
    this.onItems = onItems;
    this.batchChars = options.batchChars ?? 256 * 1024;
    this.dropManagedFields = options.dropManagedFields ?? false;
  }

  /** Items handed on so far. */
  get items(): number {
    return this.count;
  }

  write(chunk: Uint8Array): void {
    this.scan(this.utf8.write(chunk as Buffer));
  }

  /** The envelope, once every byte was written; throws if the body was cut short or is not a list. */
  end(): ListEnvelope {
    this.scan(this.utf8.end());
    if (this.phase === ITEMS || this.depth !== 0 || this.inString) {
      throw new SyntaxError("list response ended early (incomplete JSON)");
    }
    const envelope = JSON.parse(this.envelope === "" ? "null" : this.envelope) as unknown;
    if (envelope === null || typeof envelope !== "object" || Array.isArray(envelope)) {
      throw new SyntaxError("list response is not a JSON object");
    }
    delete (envelope as { items?: unknown }).items;
    return envelope as ListEnvelope;
  }

  private scan(text: string): void {
    if (text === "") return;
    let { depth, inString, escaped, phase } = this;
    let start = 0; // where this text's bytes not yet routed (to envelope or pending) begin
    let i = 0;
    const n = text.length;
    while (i < n) {
      if (inString) {
        if (escaped) {
          escaped = false;
          i++;
        }
        // Jump to the next quote: most of a list's text is inside strings. It closes the string unless an
        // odd run of backslashes precedes it.
        const q = text.indexOf('"', i);
        if (q < 0) {
          escaped = oddBackslashesBefore(text, n, i);
          i = n;
          break;
        }
        if (oddBackslashesBefore(text, q, i)) {
          i = q + 1;
          continue;
        }
        inString = false;
        i = q + 1;
        if (this.stringAt >= 0) this.closeKey(text, start, q, depth);
        this.prev = QUOTE;
        if (depth === 1 && phase === HEAD) {
          const length = this.envelope.length + (q - start) - this.keyStart;
          const key =
            q - start >= 5 ? text.slice(q - 5, q) : (this.envelope + text.slice(start, q)).slice(-5);
          this.afterItemsKey = length === 5 && key === "items";
        }
        continue;
      }
      const c = text.charCodeAt(i);
      if (c <= 0x20) {
        i++;
        continue; // whitespace
      }
      if (c === QUOTE) {
        inString = true;
        if (depth === 1 && phase === HEAD) this.keyStart = this.envelope.length + (i + 1 - start);
        if (phase === ITEMS && this.dropManagedFields && (depth === 3 || (depth === 4 && this.inMetadata))) {
          this.stringAt = this.pending.length + (i - start);
          this.stringIsFirst = this.prev === OPEN_OBJECT;
          this.stringIsKey = this.stringIsFirst || this.prev === COMMA;
        }
      } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
        depth++;
        if (depth === 4 && c === OPEN_OBJECT && this.metadataKey && this.prev === COLON && phase === ITEMS) {
          this.inMetadata = true;
        }
        if (phase === HEAD && depth === 2 && c === OPEN_ARRAY && this.afterItemsKey) {
          this.envelope += `${text.slice(start, i + 1)}]`;
          phase = ITEMS;
          start = i + 1;
        } else if (depth === 2) {
          this.afterItemsKey = false;
        }
      } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
        depth--;
        if (this.cutFrom >= 0) this.cutAtClose(depth, this.pending.length + (i - start));
        if (depth === 3) this.inMetadata = false;
        if (phase === ITEMS) {
          if (depth === 2 && c === CLOSE_OBJECT) {
            this.complete = this.pending.length + (i + 1 - start);
          } else if (depth === 1) {
            this.pending += text.slice(start, i);
            this.complete = this.pending.length;
            start = i + 1; // the "]" is in the envelope already
            phase = TAIL;
            this.parsePending();
          }
        }
      } else if (c === COMMA) {
        this.prevComma = this.pending.length + (i - start);
        if (this.cutFrom >= 0 && depth === 4) this.cutAtComma(this.prevComma);
      } else if (c !== COLON && depth === 1) {
        this.afterItemsKey = false; // a value at depth 1 that is not a string: a number, true, null
      }
      this.prev = c;
      i++;
    }
    Object.assign(this, { depth, inString, escaped, phase });
    if (start < n) {
      if (phase === ITEMS) this.pending += text.slice(start);
      else this.envelope += text.slice(start);
    }
    if (phase === ITEMS && this.complete >= this.batchChars) this.parsePending();
  }

  /** A key string of an item (depth 3) or of its metadata (depth 4) closed at `q`. */
  private closeKey(text: string, start: number, q: number, depth: number): void {
    const at = this.stringAt;
    this.stringAt = -1;
    if (!this.stringIsKey) return;
    const length = this.pending.length + (q - start) - at - 1;
    const wanted = depth === 3 ? "metadata" : "managedFields";
    if (length !== wanted.length) {
      if (depth === 3) this.metadataKey = false;
      return;
    }
    const from = at - this.pending.length + start + 1; // in `text`, when the key began in it
    const key = from >= 0 ? text.slice(from, q) : (this.pending + text.slice(start, q)).slice(at + 1);
    if (depth === 3) this.metadataKey = key === wanted;
    else if (key === wanted) {
      this.cutIsFirst = this.stringIsFirst;
      this.cutFrom = this.cutIsFirst ? at : this.prevComma; // with the comma before it
      this.cutValueEnded = false;
    }
  }

  /** A bracket closed at `at` (now at `depth`) while a managedFields member is being cut. */
  private cutAtClose(depth: number, at: number): void {
    if (depth === 4 && !this.cutValueEnded) {
      this.cutValueEnded = true; // the end of its array or object value
      if (!this.cutIsFirst) this.cut(at + 1);
    } else if (depth === 3) {
      this.cut(at); // the metadata object ends: it was its last member
    }
  }

  /** A comma at `at`, in the metadata object, while a managedFields member is being cut. */
  private cutAtComma(at: number): void {
    if (this.cutIsFirst)
      this.cut(at + 1); // the first member: its comma goes with it
    else this.cut(at); // a scalar value (null) ended
  }

  private cut(to: number): void {
    this.cuts.push(this.cutFrom, to);
    this.cutFrom = -1;
  }

  /** `text` (the first `upTo` characters of `pending`) without the cut ranges inside it. */
  private withoutCuts(text: string, upTo: number): string {
    const cuts = this.cuts;
    let out = "";
    let from = 0;
    let k = 0;
    for (; k < cuts.length && cuts[k]! < upTo; k += 2) {
      out += text.slice(from, cuts[k]);
      from = cuts[k + 1]!;
    }
    out += text.slice(from);
    this.cuts = cuts.slice(k).map((at) => at - upTo);
    return out;
  }

  /** Parses the complete items waiting (all of them at the end of the array) in one JSON.parse. */
  private parsePending(): void {
    const upTo = this.complete;
    if (upTo === 0) return;
    let text = this.pending.slice(0, upTo);
    if (this.cuts.length > 0) text = this.withoutCuts(text, upTo);
    this.pending = this.pending.slice(upTo);
    this.complete = 0;
    if (this.stringAt >= 0) this.stringAt -= upTo;
    if (this.cutFrom >= 0) this.cutFrom -= upTo;
    this.prevComma -= upTo;
    const first = text.search(/\S/);
    if (first < 0) return;
    if (text.charCodeAt(first) === 0x2c) text = text.slice(first + 1); // the comma after the last batch
    const items = JSON.parse(`[${text}]`) as T[];
    this.count += items.length;
    this.onItems(items);
  }
}

/** Whether an odd number of backslashes ends at `end` (exclusive), counting back no further than `from`. */
function oddBackslashesBefore(text: string, end: number, from: number): boolean {
  let k = end - 1;
  while (k >= from && text.charCodeAt(k) === BACKSLASH) k--;
  return (end - 1 - k) % 2 === 1;
}
