// What every object a server owns carries: its name and namespace, the server's labels and the controller reference
// to the server (so the garbage collector deletes it with the server).
import { type KubeObject, setControllerReference } from "@capstan/core";
import { type Prometheus, PrometheusKind } from "../../api/prometheus.ts";
import { serverLabels } from "../objects.ts";

/** `obj` with the controller reference to `p`. */
export function owned<T extends KubeObject>(p: Prometheus, obj: T): T {
  setControllerReference(p, PrometheusKind, obj);
  return obj;
}

/** The metadata of an object `name` in the server's namespace, with the server's labels. */
export function meta(p: Prometheus, name: string) {
  return { name, namespace: p.metadata.namespace ?? "", labels: serverLabels(p) };
}
