// Example: a shared informer on its own, without a controller. Prints ConfigMap events in one namespace
// and, every 10 s, how many objects the cache holds. Run against the cluster in KUBECONFIG:
//   node packages/core/examples/informer.ts [namespace]
import { Client, ConfigMap, InformerFactory, shutdownSignal } from "@capstan/core";

const namespace = process.argv[2] ?? "default";
const factory = new InformerFactory({ client: new Client() });
const informer = factory.informerFor(ConfigMap, { namespace });
informer.addEventHandler({
  onAdd: (cm, initial) => console.log(initial ? "listed" : "added", cm.metadata.name),
  onUpdate: (_old, cm) => console.log("updated", cm.metadata.name, cm.metadata.resourceVersion),
  onDelete: (cm) => console.log("deleted", cm.metadata.name),
});

const signal = shutdownSignal();
factory.start(signal);
await factory.waitForSync(signal);
console.log(`synced: ${informer.store.size} ConfigMaps in ${namespace}`);
const timer = setInterval(() => console.log(`cache holds ${informer.store.size} ConfigMaps`), 10_000);
await factory.stopped();
clearInterval(timer);
