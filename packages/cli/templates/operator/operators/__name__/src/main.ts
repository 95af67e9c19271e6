// The __name__ operator's process: wiring only. Flags (or their environment variables, which the chart sets) are
// core's operator command line: `node main.js --help` lists them. POD_NAME is the Lease identity.
import { createLogger, Manager, operatorCommandLine, shutdownSignal } from "@capstan/core";
import { __kind__CacheSelectors, __kind__Controller } from "./reconcile/controller.ts";

const cli = operatorCommandLine({
  name: "__name__-operator",
  description: "The __name__ operator: keeps a ConfigMap for each __Kind__.",
});
const logger = createLogger({ name: "__name__-operator", level: cli.logLevel });
const mgr = new Manager({ ...cli.manager, logger, cacheSelectors: __kind__CacheSelectors() });
mgr.add(__kind__Controller({ maxConcurrentReconciles: cli.maxConcurrentReconciles }));
logger.info(
  { namespace: cli.watchNamespace ?? "(all)", leaderElect: cli.leaderElect },
  "starting the __name__ operator",
);
await mgr.start(shutdownSignal()).catch((err: unknown) => {
  logger.error({ err }, "__name__ operator failed");
  process.exit(1);
});
