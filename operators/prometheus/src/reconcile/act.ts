// The writes of one reconcile: every object of the server applied when it differs from the live one (ServiceAccount,
// discovery RBAC, rule shards, config Secret, Services, StatefulSet, PDB), what is no longer wanted deleted, and the
// last-good generation recorded. A write the API server refuses (refusals.ts) is a problem, not a thrown error.
import {
  addFinalizer,
  annotatePods,
  hasFinalizer,
  isNotFound,
  type Kind,
  type KubeObject,
  PodDisruptionBudget,
  type ReconcileContext,
  Role,
  RoleBinding,
  removeFinalizer,
  Secret,
  type SecretObject,
  Service,
  ServiceAccount,
  StatefulSet,
} from "@capstan/core";
import { DEFAULT_STORAGE_SIZE, type Prometheus, PrometheusKind } from "../api/prometheus.ts";
import { clusterMetricsRbac } from "../desired/cluster-metrics.ts";
import { discoveryRbac, discoveryScope, serviceAccount } from "../desired/objects/discovery-rbac.ts";
import type { LastGood } from "../desired/objects/secrets.ts";
import { clientService, governingService } from "../desired/objects/services.ts";
import { type PodSettings, podDisruptionBudget, statefulSet } from "../desired/objects/statefulset.ts";
import {
  ClusterRole,
  ClusterRoleBinding,
  CONFIG_HASH_ANNOTATION,
  GENERATION_ANNOTATION,
  RBAC_FINALIZER,
  serverName,
} from "../desired/objects.ts";
import type { Selection } from "../desired/select.ts";
import type { ForeignRbacObject, Observation } from "./observe.ts";
import { isRefusal, refusalProblem } from "./refusals.ts";
import type { Problem } from "./status.ts";

/**
 * Records `lastGood` (a generation every pod accepted): its rule shards first, then the Secret naming the generation
 * (the init container checks the files against the checksums in that Secret, so a copy interrupted between two
 * writes is never taken for a good one), then the last-good shards the generation no longer uses. Unchanged objects
 * are not written. A refused write is a problem, as elsewhere.
 */
export async function recordLastGood(
  ctx: ReconcileContext,
  p: Prometheus,
  obs: Observation,
  lastGood: LastGood,
  problems: Problem[],
): Promise<void> {
  const live = new Map(obs.lastGoodShards.map((s) => [s.metadata.name ?? "", s]));
  try {
    for (const shard of lastGood.shards) {
      await ctx.apply(Secret, shard, live.get(shard.metadata.name ?? ""));
    }
    const applied = await ctx.apply(Secret, lastGood.secret, obs.lastGood);
    if (applied.applied) {
      const id = lastGood.secret.metadata.annotations?.[GENERATION_ANNOTATION] ?? "";
      ctx.recorder.event(
        p,
        "Normal",
        "LastGoodRecorded",
        "UpdateConfig",
        `every pod accepted configuration generation ${id}: recorded in Secret ${lastGood.secret.metadata.name} as the one a starting pod loads`,
      );
    }
    const wanted = new Set(lastGood.shards.map((s) => s.metadata.name ?? ""));
    for (const s of obs.lastGoodShards) {
      if (wanted.has(s.metadata.name ?? "")) continue;
      await ctx.client
        .delete(Secret, s.metadata.name ?? "", p.metadata.namespace ?? "", { signal: ctx.signal })
        .catch((err: unknown) => {
          if (!isNotFound(err)) throw err;
        });
    }
  } catch (err) {
    if (!isRefusal(err)) throw err;
    problems.push(refusalProblem(lastGood.secret, err));
  }
}

/** What {@link act} writes for the configuration. */
export interface ConfigObjects {
  /** The config Secret; undefined keeps the live one. */
  secret?: SecretObject;
  /** The rule shards wanted; undefined keeps the live ones. */
  shards?: SecretObject[];
  /** Rule shard slots the pods mount. */
  slots: number;
}

/**
 * Applies every object of the server (no request for one that already matches) and deletes what is no longer
 * wanted: RBAC outside the discovery scope, the PDB below two replicas, rule shards no longer needed (once every
 * server pod carries the configuration that no longer lists their files). A write the API server refuses is a
 * problem, not an error; the answer is the first refusal of a configuration write (a rule shard or the config
 * Secret), undefined when the configuration was written.
 */
export async function act(
  ctx: ReconcileContext,
  p: Prometheus,
  obs: Observation,
  settings: PodSettings,
  selection: Selection | undefined,
  problems: Problem[],
  config: ConfigObjects,
): Promise<Problem | undefined> {
  const namespace = p.metadata.namespace ?? "";
  const ownedLive = (kind: string, name: string) => obs.owned.get(`${kind}/${name}`) as never;
  /** Runs one write; a refusal becomes a problem (and false), anything else is thrown. */
  const attempt = async (obj: KubeObject, write: () => Promise<unknown>, reason?: string) => {
    try {
      await write();
      return true;
    } catch (err) {
      if (!isRefusal(err)) throw err;
      problems.push(refusalProblem(obj, err, reason));
      return false;
    }
  };

  if (p.spec.serviceAccountName === undefined) {
    const sa = serviceAccount(p);
    await attempt(sa, () => ctx.apply(ServiceAccount, sa, ownedLive("ServiceAccount", serverName(p))));
  }

  // RBAC: exactly the namespaces the monitors look in; kept as is when the selection is unknown.
  if (selection !== undefined) {
    const scope = discoveryScope([...selection.serviceMonitors, ...selection.podMonitors]);
    const rbac = discoveryRbac(p, scope);
    // And what spec.clusterMetrics asks for (kubelet, API server), cluster-wide.
    rbac.foreign.push(...clusterMetricsRbac(p));
    if (rbac.foreign.length > 0) await addFinalizer(ctx.client, PrometheusKind, p, RBAC_FINALIZER);
    const wanted = new Set<string>();
    for (const o of rbac.owned) {
      wanted.add(`${o.kind}/${o.metadata.name}`);
      const kind = (o.kind === "Role" ? Role : RoleBinding) as Kind;
      await attempt(o, () => ctx.apply(kind, o, ownedLive(o.kind ?? "", o.metadata.name ?? "")));
    }
    for (const kind of ["Role", "RoleBinding"]) {
      const live = obs.owned.get(`${kind}/${serverName(p)}`);
      if (live !== undefined && !wanted.has(`${kind}/${serverName(p)}`))
        await deleteAll(ctx, [live as ForeignRbacObject]);
    }
    const foreignKey = (o: KubeObject) => `${o.kind}/${o.metadata.namespace ?? ""}/${o.metadata.name}`;
    const liveForeign = new Map(obs.foreign.map((o) => [foreignKey(o), o]));
    for (const o of rbac.foreign) {
      await attempt(o, () => ctx.apply(rbacKind(o), o, liveForeign.get(foreignKey(o))));
      liveForeign.delete(foreignKey(o));
    }
    await deleteAll(ctx, [...liveForeign.values()]);
    if (rbac.foreign.length === 0 && hasFinalizer(p, RBAC_FINALIZER)) {
      await removeFinalizer(ctx.client, PrometheusKind, p, RBAC_FINALIZER);
    }
  }

  // The rule shards first, so that a configuration listing a new rule file never reaches the API server before it.
  let refused: Problem | undefined;
  const liveShards = new Map(obs.ruleShards.map((s) => [s.metadata.name ?? "", s]));
  for (const shard of config.shards ?? []) {
    const name = shard.metadata.name ?? "";
    const ok = await attempt(shard, () => ctx.apply(Secret, shard, liveShards.get(name)));
    if (!ok) refused ??= problems.at(-1);
  }
  const secret = config.secret;
  if (secret !== undefined) {
    const before = obs.configSecret;
    let applied = { applied: false };
    const ok = await attempt(secret, async () => {
      applied = await ctx.apply(Secret, secret, before);
    });
    if (!ok) refused ??= problems.at(-1);
    if (applied.applied && before !== undefined) {
      const hash = secret.metadata.annotations?.[CONFIG_HASH_ANNOTATION] ?? "";
      ctx.recorder.event(
        p,
        "Normal",
        "ConfigurationChanged",
        "UpdateConfig",
        `configuration ${hash} written to Secret ${serverName(p)}; the pods reload it without restarting`,
      );
    }
  }
  if (secret !== undefined && refused === undefined) {
    // Each server pod stamped with the configuration it should load: the kubelet refreshes the mounted Secret at
    // once instead of at its next periodic sync, so the reloader sees it within seconds (once per change and pod).
    const hash = secret.metadata.annotations?.[CONFIG_HASH_ANNOTATION] ?? "";
    await annotatePods(ctx.client, obs.serverPods, CONFIG_HASH_ANNOTATION, hash, {
      fieldManager: ctx.fieldManager,
    });
  }

  if (config.shards !== undefined && refused === undefined) {
    // Shards no longer needed hold only files the new configuration does not list (a file never leaves a shard
    // that still holds others, and the first file kept in a shard never moves): deleted once every running server
    // pod carries the configuration hash (stamped by an earlier reconcile, after the configuration was written).
    const wanted = new Set(config.shards.map((s) => s.metadata.name ?? ""));
    const hash = secret?.metadata.annotations?.[CONFIG_HASH_ANNOTATION];
    const podsCarry = obs.serverPods
      .filter((pod) => pod.metadata.deletionTimestamp === undefined)
      .every((pod) => pod.metadata.annotations?.[CONFIG_HASH_ANNOTATION] === hash);
    const unneeded = obs.ruleShards.filter((s) => !wanted.has(s.metadata.name ?? ""));
    if (
      podsCarry &&
      hash !== undefined &&
      obs.configSecret?.metadata.annotations?.[CONFIG_HASH_ANNOTATION] === hash
    ) {
      for (const s of unneeded) {
        await attempt(s, () =>
          ctx.client
            .delete(Secret, s.metadata.name ?? "", namespace, { signal: ctx.signal })
            .catch((err: unknown) => {
              if (!isNotFound(err)) throw err;
            }),
        );
      }
    }
  }

  for (const svc of [governingService(p), clientService(p)]) {
    await attempt(svc, () => ctx.apply(Service, svc, ownedLive("Service", svc.metadata.name ?? "")));
  }

  const live = obs.statefulSet;
  const liveSize = live?.spec?.volumeClaimTemplates?.[0]?.spec?.resources?.requests?.storage;
  const wantSize =
    p.spec.storage.ephemeral === true ? undefined : (p.spec.storage.size ?? DEFAULT_STORAGE_SIZE);
  if (liveSize !== undefined && wantSize !== undefined && wantSize !== liveSize) {
    // A StatefulSet's claim template is immutable: keep it (and the retention size derived from it), and say what to do.
    problems.push({
      reason: "StorageSizeChangeNotApplied",
      message: `spec.storage.size ${wantSize} differs from the claims' ${liveSize}: a StatefulSet cannot change its claim template; expand each claim data-${serverName(p)}-<ordinal> by hand (if its StorageClass allows expansion)`,
    });
  }
  const sts = statefulSet(p, settings, config.slots, liveSize ?? wantSize);
  await attempt(sts, () => ctx.apply(StatefulSet, sts, live), "StatefulSetRefused");

  const pdb = podDisruptionBudget(p);
  const livePdb = ownedLive("PodDisruptionBudget", serverName(p)) as KubeObject | undefined;
  if (pdb !== undefined) {
    await attempt(pdb, () => ctx.apply(PodDisruptionBudget, pdb, livePdb as never));
  } else if (livePdb !== undefined) {
    await ctx.client
      .delete(PodDisruptionBudget, serverName(p), namespace, { signal: ctx.signal })
      .catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
  }
  return refused;
}

function rbacKind(o: KubeObject): Kind {
  switch (o.kind) {
    case "Role":
      return Role as Kind;
    case "RoleBinding":
      return RoleBinding as Kind;
    case "ClusterRole":
      return ClusterRole as Kind;
    default:
      return ClusterRoleBinding as Kind;
  }
}

/** Deletes `objects` (RBAC objects), each gone already or now. */
export async function deleteAll(ctx: ReconcileContext, objects: readonly KubeObject[]): Promise<void> {
  for (const o of objects) {
    await ctx.client
      .delete(rbacKind(o), o.metadata.name ?? "", o.metadata.namespace, { signal: ctx.signal })
      .catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
  }
}
