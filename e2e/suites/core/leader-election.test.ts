// Leader election between real processes on one Lease: one leads; SIGKILL hands over after the lease
// expires; a graceful stop hands over at once. Takeover times are measured and printed, not asserted.
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { type Client, Lease } from "@capstan/core";
import { connect, createNamespace, eventually, type TestNamespace } from "@capstan/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const fixture = fileURLToPath(new URL("./fixtures/elector.ts", import.meta.url));
let client: Client;
let ns: TestNamespace;
const procs: ChildProcess[] = [];

beforeAll(async () => {
  ({ client } = connect());
  ns = await createNamespace(client, "election");
});
afterAll(async () => {
  for (const p of procs) p.kill("SIGKILL");
  await ns?.cleanup();
  await client?.close();
});

interface Candidate {
  proc: ChildProcess;
  leadingAt?: number;
  stoppedAt?: number;
}

function candidate(identity: string): Candidate {
  const proc = spawn(process.execPath, [fixture, identity, ns.name, "it-lease"], {
    stdio: ["ignore", "pipe", "inherit"],
    env: process.env,
  });
  procs.push(proc);
  const c: Candidate = { proc };
  createInterface({ input: proc.stdout! }).on("line", (line) => {
    const ev = JSON.parse(line) as { event: string; at: number };
    if (ev.event === "leading") c.leadingAt = ev.at;
    if (ev.event === "stopped") c.stoppedAt = ev.at;
  });
  return c;
}

async function holder(): Promise<string> {
  return (await client.get(Lease, "it-lease", ns.name)).spec?.holderIdentity ?? "";
}

describe("leader election between processes", () => {
  it("exactly one leads; SIGKILL and graceful stop both hand over", async () => {
    const a = candidate("a");
    await eventually(() => expect(a.leadingAt).toBeDefined(), { timeoutMs: 60_000 });
    const b = candidate("b");
    await new Promise((r) => setTimeout(r, 6_000)); // b campaigns for three retry periods
    expect(b.leadingAt).toBeUndefined();
    expect(await holder()).toBe("a");

    const killedAt = Date.now();
    a.proc.kill("SIGKILL");
    await eventually(() => expect(b.leadingAt).toBeDefined(), { timeoutMs: 60_000, message: "b takes over" });
    const killTakeover = (b.leadingAt ?? 0) - killedAt;
    expect(await holder()).toBe("b");

    const c = candidate("c");
    await new Promise((r) => setTimeout(r, 3_000));
    expect(c.leadingAt).toBeUndefined();
    const stoppedAt = Date.now();
    b.proc.kill("SIGTERM");
    await eventually(() => expect(b.stoppedAt).toBeDefined(), {
      timeoutMs: 30_000,
      message: "b stops gracefully",
    });
    await eventually(() => expect(c.leadingAt).toBeDefined(), { timeoutMs: 60_000, message: "c takes over" });
    const gracefulTakeover = (c.leadingAt ?? 0) - stoppedAt;
    expect(await holder()).toBe("c");

    console.log(
      `leader election takeover: after SIGKILL ${(killTakeover / 1000).toFixed(1)} s ` +
        `(leaseDuration 15 s from when the standby saw the last renewal, standbys retry every 2-4.4 s); ` +
        `after graceful stop ${(gracefulTakeover / 1000).toFixed(1)} s`,
    );
    c.proc.kill("SIGTERM");
  });
});
