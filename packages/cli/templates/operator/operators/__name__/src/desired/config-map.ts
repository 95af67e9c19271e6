// The objects a __Kind__ wants, as pure functions of it (no I/O): golden-file tested in config-map.test.ts.
import { type ConfigMapObject, MANAGED_BY_LABEL, setControllerReference } from "@capstan/core";
import { type __Kind__, __Kind__Kind } from "../api/__kind__.ts";

/** The label value on everything the operator creates (its cache watches only these). */
export const MANAGED_BY = "capstan-__name__-operator";

/** The ConfigMap's name: `<name>-__kind__`. */
export function configMapName(obj: __Kind__): string {
  return `${obj.metadata.name ?? ""}-__kind__`;
}

/** The ConfigMap `<name>-__kind__` holding spec.data, owned by the __Kind__ (deleted with it). */
export function desiredConfigMap(obj: __Kind__): ConfigMapObject {
  const cm: ConfigMapObject = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: configMapName(obj),
      namespace: obj.metadata.namespace ?? "default",
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY, "app.kubernetes.io/instance": obj.metadata.name ?? "" },
    },
    data: { ...obj.spec.data },
  };
  setControllerReference(obj, __Kind__Kind, cm);
  return cm;
}
