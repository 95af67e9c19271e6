// Example: Lease leader election, as the manager runs it. Run it twice in two terminals: one leads, the other waits
// (a standby keeps its caches warm and serves its probes); stop the leader (Ctrl-C releases the Lease) and the other
// takes over at its next retry. Its one runnable runs only on the leader, as every controller does.
//   node packages/core/examples/leader-election.ts [namespace]
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { Manager, shutdownSignal } from "@capstan/core";

const namespace = process.argv[2] ?? "default";
const identity = `${hostname()}_${randomUUID().slice(0, 8)}`;
const mgr = new Manager({
  name: "capstan-example",
  leaderElection: { namespace, name: "capstan-example", identity },
  metricsPort: null,
  healthPort: null,
});
mgr.add({
  name: "leader-only",
  start: async (signal: AbortSignal) => {
    console.log(`${identity}: leading`);
    await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
    console.log(`${identity}: stopped leading`);
  },
});
try {
  await mgr.start(shutdownSignal()); // resolves after a graceful stop (the Lease released)
  process.exit(0);
} catch (err) {
  console.error(`${identity}: ${err instanceof Error ? err.message : String(err)}`); // e.g. leader election lost
  process.exit(1);
}
