// The fake API server's scripts: which requests they match, how many times, the latency they add and the
// reply they give instead of the server's own (a fault, a canned body, or nothing to serve normally).
import type { RecordedRequest, Reply, RequestMatch, Script } from "./fake-api-types.ts";

interface ScriptEntry {
  match: RequestMatch;
  remaining: number;
  hits: number;
  delayMs: number;
  reply: ((req: RecordedRequest) => Reply | undefined) | undefined;
}

/** The scripts of one fake API server, in the order they were added. */
export class ScriptBook {
  private readonly entries: ScriptEntry[] = [];

  /** Adds a script; `times` undefined applies it to every matching request. */
  add(match: RequestMatch, delayMs: number, reply: ScriptEntry["reply"], times: number | undefined): Script {
    const entry: ScriptEntry = {
      match,
      remaining: times ?? Number.POSITIVE_INFINITY,
      hits: 0,
      delayMs,
      reply,
    };
    this.entries.push(entry);
    const entries = this.entries;
    return {
      get hits() {
        return entry.hits;
      },
      remove() {
        const i = entries.indexOf(entry);
        if (i >= 0) entries.splice(i, 1);
      },
    };
  }

  /**
   * Runs the scripts matching `req` in order (each counts a hit and waits its delay) until one gives a reply;
   * undefined when none does and the request is served normally. `signal` cuts the delays short.
   */
  async reply(req: RecordedRequest, signal: AbortSignal): Promise<Reply | undefined> {
    for (const script of [...this.entries]) {
      if (script.remaining <= 0 || !matches(script.match, req)) continue;
      script.remaining--;
      script.hits++;
      if (script.delayMs > 0) await sleep(script.delayMs, signal);
      const reply = script.reply?.(req);
      if (reply !== undefined) return reply;
    }
    return undefined;
  }
}

/** True when every field of the match that is given matches the request. */
export function matches(m: RequestMatch, req: RecordedRequest): boolean {
  if (m.verb !== undefined && !(typeof m.verb === "string" ? [m.verb] : m.verb).includes(req.verb))
    return false;
  if (m.kind !== undefined) {
    if (typeof m.kind === "string") {
      if (m.kind !== req.kind && m.kind !== req.resource) return false;
    } else if (m.kind.apiVersion !== req.apiVersion || m.kind.plural !== req.resource) return false;
  }
  if (m.namespace !== undefined && m.namespace !== req.namespace) return false;
  if (m.name !== undefined && m.name !== req.name) return false;
  if (m.subresource !== undefined && m.subresource !== req.subresource) return false;
  return m.where === undefined || m.where(req);
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
