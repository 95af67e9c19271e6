// The Services of a server: the client Service (every ready pod) and the governing headless Service of the
// StatefulSet (a DNS name per pod).
import type { ServiceObject } from "@capstan/core";
import type { Prometheus } from "../../api/prometheus.ts";
import { governingServiceName, selectorLabels, serverName } from "../objects.ts";
import { WEB_PORT } from "../reloader.ts";
import { meta, owned } from "./metadata.ts";

/** The client Service `prometheus-<name>`: every ready pod on port 9090 ("web"). */
export function clientService(p: Prometheus): ServiceObject {
  return owned<ServiceObject>(p, {
    apiVersion: "v1",
    kind: "Service",
    metadata: meta(p, serverName(p)),
    spec: {
      type: "ClusterIP",
      selector: selectorLabels(p),
      ports: [{ name: "web", port: WEB_PORT, targetPort: "web", protocol: "TCP" }],
    },
  });
}

/** The governing headless Service `prometheus-<name>-operated`: a DNS name per pod. */
export function governingService(p: Prometheus): ServiceObject {
  return owned<ServiceObject>(p, {
    apiVersion: "v1",
    kind: "Service",
    metadata: meta(p, governingServiceName(p)),
    spec: {
      clusterIP: "None",
      selector: selectorLabels(p),
      ports: [{ name: "web", port: WEB_PORT, targetPort: "web", protocol: "TCP" }],
    },
  });
}
