// The kinds a fake API server serves: the built-in ones, those registered by the test, and those it learns
// from a CRD or from an object written to a collection it did not know (as the API server would after a CRD).
import {
  ConfigMap,
  CronJob,
  CustomResourceDefinition,
  type CustomResourceDefinitionObject,
  Deployment,
  defineKind,
  EndpointSlice,
  Job,
  type Kind,
  KubeEvent,
  Lease,
  Namespace,
  PersistentVolumeClaim,
  Pod,
  PodDisruptionBudget,
  Role,
  RoleBinding,
  Secret,
  Service,
  ServiceAccount,
  StatefulSet,
} from "../api/kinds.ts";
import type { KubeObject } from "../api/object.ts";
import { collectionPath, isObjectBody, type Target } from "./fake-api-protocol.ts";
import type { Verb } from "./fake-api-types.ts";

/** The kinds every fake API server serves. */
export const BUILT_IN_KINDS: readonly Kind[] = [
  ConfigMap,
  CronJob,
  CustomResourceDefinition,
  Deployment,
  EndpointSlice,
  Job,
  KubeEvent,
  Lease,
  Namespace,
  PersistentVolumeClaim,
  Pod,
  PodDisruptionBudget,
  Role,
  RoleBinding,
  Secret,
  Service,
  ServiceAccount,
  StatefulSet,
  defineKind({ group: "", version: "v1", kind: "Event", plural: "events", namespaced: true }),
];

/** Kinds by collection path and by apiVersion/kind. */
export class KindRegistry {
  private readonly byCollection = new Map<string, Kind>();
  private readonly byType = new Map<string, Kind>();

  /** Serves these kinds too. */
  register(...kinds: Kind[]): void {
    for (const kind of kinds) {
      this.byCollection.set(collectionPath(kind), kind);
      this.byType.set(`${kind.apiVersion}/${kind.kind}`, kind);
    }
  }

  /** The kind name ("ConfigMap") served at a collection path, if known. */
  kindName(collection: string): string | undefined {
    return this.byCollection.get(collection)?.kind;
  }

  /** The kind of an object (from its apiVersion and kind), if the server knows it. */
  kindFor(obj: KubeObject): Kind | undefined {
    return this.byType.get(`${obj.apiVersion}/${obj.kind}`);
  }

  /** The registered kind of an object; throws naming what to register when unknown. */
  kindOf(obj: KubeObject): Kind {
    const kind = this.kindFor(obj);
    if (kind === undefined) {
      throw new Error(
        `FakeApiServer: unknown kind ${obj.apiVersion ?? "(no apiVersion)"} ${obj.kind ?? "(no kind)"} of object ${obj.metadata.namespace ?? ""}/${obj.metadata.name ?? ""}: ` +
          "set apiVersion and kind, and pass custom kinds in `kinds` (or call register(kind))",
      );
    }
    return kind;
  }

  /** Records the kind of objects written to a collection the server did not know, and CRDs' kinds. */
  learn(target: Target, verb: Verb, body: unknown): void {
    if (!["create", "update", "apply"].includes(verb) || !isObjectBody(body)) return;
    if (!this.byCollection.has(target.collection) && body.apiVersion === target.apiVersion && body.kind) {
      this.register(
        defineKind({
          group: target.apiVersion.includes("/") ? (target.apiVersion.split("/")[0] ?? "") : "",
          version: target.apiVersion.split("/").at(-1) ?? "",
          kind: body.kind,
          plural: target.resource,
          namespaced: target.namespace !== "",
        }),
      );
    }
    if (target.collection === collectionPath(CustomResourceDefinition)) {
      const crd = body as unknown as CustomResourceDefinitionObject;
      for (const v of crd.spec?.versions ?? []) {
        if (!crd.spec.names?.plural || !crd.spec.names.kind) continue;
        this.register(
          defineKind({
            group: crd.spec.group,
            version: v.name,
            kind: crd.spec.names.kind,
            plural: crd.spec.names.plural,
            namespaced: crd.spec.scope !== "Cluster",
          }),
        );
      }
    }
  }
}
