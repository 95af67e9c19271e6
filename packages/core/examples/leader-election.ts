// Example: Lease leader election without a manager. Run it twice in two terminals: one leads, the other
// waits; stop the leader (Ctrl-C releases the Lease) and the other takes over at its next retry.
//   node packages/core/examples/leader-election.ts [namespace]
import { Client, defaultLeaderIdentity, LeaderElector, LeaseLock, shutdownSignal } from "@capstan/core";

const namespace = process.argv[2] ?? "default";
const identity = defaultLeaderIdentity();
const elector = new LeaderElector({
  lock: new LeaseLock({ client: new Client(), namespace, name: "capstan-example", identity }),
  callbacks: {
    onStartedLeading: () => console.log(`${identity}: leading`),
    onStoppedLeading: () => console.log(`${identity}: stopped leading`),
    onNewLeader: (leader) => console.log(`${identity}: the leader is ${leader || "nobody"}`),
  },
});
const outcome = await elector.run(shutdownSignal());
console.log(`${identity}: ${outcome}`);
process.exit(outcome === "lost" ? 1 : 0);
