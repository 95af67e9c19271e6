// What becomes of a stateful operand's data claims when its custom resource is deleted, as StatefulSet's
// persistentVolumeClaimRetentionPolicy.whenDeleted says it for a StatefulSet's claims. Retain (the default) keeps
// them: the claim carries no owner reference, so neither the garbage collector (whatever deleted the resource:
// kubectl, an Argo CD prune, a Helm uninstall, a namespace-wide cleanup of custom resources) nor a foreground
// cascade can take the data with it; a label records the uid of the resource it was made for. Delete gives the
// claim a controller reference, and the garbage collector deletes it with the resource.
import * as Type from "typebox/type";
import { type Kind, PersistentVolumeClaim } from "../api/kinds.ts";
import type { KubeObject, OwnerReference } from "../api/object.ts";
import type { Client } from "../client/client.ts";
import { getControllerOf, ownerReferenceFor, setControllerReference } from "./owner-references.ts";

/** `Retain`: the claims outlive the resource; `Delete`: they are garbage-collected with it. */
export type ClaimRetention = Type.Static<ClaimRetentionSchema>;

/** The schema of a `whenDeleted` field: Retain or Delete, with its description and default. */
export interface ClaimRetentionSchema extends Type.TEnum<["Retain", "Delete"]> {
  type: "string";
  default: "Retain";
  description: string;
}

/**
 * The schema of a `whenDeleted` field (default Retain). `what` names the claims in the description; `more`, when
 * given, is added to its end (what the operator does with a kept claim).
 */
export function claimRetentionSchema(what: string, more?: string): ClaimRetentionSchema {
  const description =
    `What happens to ${what} when this resource is deleted (as a StatefulSet's ` +
    "persistentVolumeClaimRetentionPolicy.whenDeleted): Retain (default) keeps them, with no owner reference, so " +
    "no deletion of the resource (kubectl, a GitOps prune, a Helm uninstall) deletes the data; Delete lets the " +
    "garbage collector delete them with it. A change applies to the existing claims too.";
  const options = {
    type: "string",
    default: "Retain",
    description: more === undefined ? description : `${description} ${more}`,
  } as const;
  return Type.Enum(["Retain", "Delete"], options) as ClaimRetentionSchema;
}

/**
 * Marks a claim the operator is about to create for `owner` (mutates and returns it): with Delete a controller
 * reference to the owner; with Retain none, and `uidLabel` set to the owner's uid.
 */
export function retainedClaim<T extends KubeObject>(
  owner: KubeObject,
  ownerKind: Kind,
  claim: T,
  policy: ClaimRetention,
  uidLabel: string,
): T {
  if (policy === "Delete") {
    setControllerReference(owner, ownerKind, claim);
    return claim;
  }
  const uid = ownerReferenceFor(owner, ownerKind).uid;
  claim.metadata.labels = { ...claim.metadata.labels, [uidLabel]: uid };
  return claim;
}

/**
 * True when `claim` is one of `owner`'s: its controller is the owner, or it has no controller and was made for the
 * owner (`uidLabel` holds its uid). With `adoptRetained`, a claim with no controller is the owner's whatever its
 * label says: for operators whose resource, deleted and created again under the same name, takes its data back
 * (the caller has already selected the claims by the resource's name and labels).
 */
export function claimBelongsTo(
  owner: KubeObject,
  claim: KubeObject,
  uidLabel: string,
  options: { adoptRetained?: boolean } = {},
): boolean {
  const uid = owner.metadata.uid;
  if (uid === undefined) return false;
  const controller = getControllerOf(claim);
  if (controller !== undefined) return controller.uid === uid;
  return options.adoptRetained === true || claim.metadata.labels?.[uidLabel] === uid;
}

/**
 * The merge patch that brings an existing claim of `owner` to `policy` (its owner references, and `uidLabel`), or
 * undefined when it already matches: a steady state writes nothing. The patch carries the claim's resourceVersion,
 * so it is refused (409) if the claim changed since it was read.
 */
export function claimRetentionPatch(
  owner: KubeObject,
  ownerKind: Kind,
  claim: KubeObject,
  policy: ClaimRetention,
  uidLabel: string,
): { metadata: Record<string, unknown> } | undefined {
  const ref = ownerReferenceFor(owner, ownerKind, true);
  const refs: OwnerReference[] = claim.metadata.ownerReferences ?? [];
  const controlled = refs.some((r) => r.controller === true && r.uid === ref.uid);
  const labelled = claim.metadata.labels?.[uidLabel] === ref.uid;
  const resourceVersion = claim.metadata.resourceVersion;
  const rv = resourceVersion === undefined ? {} : { resourceVersion };
  if (policy === "Delete") {
    if (controlled) return undefined;
    if (getControllerOf(claim) !== undefined) return undefined; // another controller's: never taken over
    return { metadata: { ...rv, ownerReferences: [...refs, ref] } };
  }
  if (!controlled && labelled) return undefined;
  const kept = refs.filter((r) => r.uid !== ref.uid);
  return {
    metadata: {
      ...rv,
      labels: { [uidLabel]: ref.uid },
      ...(controlled ? { ownerReferences: kept.length === 0 ? null : kept } : {}),
    },
  };
}

/**
 * Brings each of `owner`'s claims to `policy` ({@link claimRetentionPatch}): claims made before the policy existed,
 * a policy changed, a kept claim taken back. Patches only the claims that differ (a steady state writes nothing) and
 * returns their names.
 */
export async function applyClaimRetention(
  client: Pick<Client, "patch">,
  owner: KubeObject,
  ownerKind: Kind,
  claims: Iterable<KubeObject>,
  policy: ClaimRetention,
  uidLabel: string,
  signal?: AbortSignal,
): Promise<string[]> {
  const patched: string[] = [];
  for (const claim of claims) {
    const patch = claimRetentionPatch(owner, ownerKind, claim, policy, uidLabel);
    const name = claim.metadata.name;
    if (patch === undefined || name === undefined) continue;
    await client.patch(PersistentVolumeClaim, name, claim.metadata.namespace, patch, "merge", {
      ...(signal === undefined ? {} : { signal }),
    });
    patched.push(name);
  }
  return patched;
}
