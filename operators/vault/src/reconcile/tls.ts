// The listener certificate in place: the user's Secret (spec.tls.secretName) read as is, or the operator's CA
// Secret and server certificate Secret, issued when missing and renewed when notAfter - now < renewBefore. During a
// switch of the certificate's source (spec.tls.secretName set, changed or unset), the pods not yet restarted still
// serve the Secret they mount: the operator's client trusts its CA too (and the operator keeps renewing its own
// certificate while a pod serves it), until every pod serves spec's Secret.
import {
  type Cache,
  type Client,
  isAlreadyExists,
  isNotFound,
  Pod,
  Secret,
  type SecretObject,
  secretData,
} from "@capstan/core";
import type { VaultCluster } from "../api/vault-cluster.ts";
import { caSecretName, clusterRef, selectorLabels, tlsHosts, tlsSecretName } from "../desired/names.ts";
import { mountedTlsSecret, tlsSecret } from "../desired/objects.ts";
import {
  type CertificateInfo,
  type CertificatePair,
  certificateInfo,
  createCA,
  issueServerCertificate,
  parseGoDuration,
  renewalReason,
  trustBundle,
} from "../desired/tls.ts";
import type { Observed } from "../plan/plan.ts";

/** A Secret that pods still serve during a switch, other than spec's. */
export interface ServedSecret {
  secret: string;
  /** The pods that mount it. */
  pods: string[];
  /** Why its CA could not be read (then those pods are not trusted). */
  problem?: string;
}

/** What the reconcile learns (and did) about the listener certificate. */
export interface TlsState {
  tls: Observed["tls"];
  /**
   * What the operator's client trusts (PEM): the CA of spec's certificate, and during a switch also the CAs of the
   * Secrets pods still serve. Undefined while spec's certificate is not in place.
   */
  ca?: string;
  notAfter?: Date;
  /** The fingerprint of the certificate spec's Secret holds: what a new pod serves (see CERTIFICATE_ANNOTATION). */
  fingerprint?: string;
  /** The fingerprint of the certificate in each Secret pods mount, by Secret name: each pod is stamped with its own. */
  fingerprints: Map<string, string>;
  /** During a switch: spec's Secret and the other Secrets pods still serve. */
  switching?: { to: string; from: ServedSecret[] };
  /** What was written, for Events. */
  issued: { reason: string; message: string }[];
}

/**
 * The Secret each of the cluster's live pods mounts its certificate from, with the pods on it (the pod's volume is
 * the record, written when the pod was made: an operator restarted mid-switch reads the same).
 */
export async function servedTlsSecrets(cache: Cache, cluster: VaultCluster): Promise<Map<string, string[]>> {
  const { namespace } = clusterRef(cluster);
  const served = new Map<string, string[]>();
  for (const pod of await cache.list(Pod, { namespace, labels: selectorLabels(cluster) })) {
    const mine = pod.metadata.ownerReferences?.some(
      (r) => r.controller === true && r.uid === cluster.metadata.uid,
    );
    const secret = mountedTlsSecret(pod);
    if (!mine || pod.metadata.deletionTimestamp !== undefined || secret === undefined) continue;
    served.set(secret, [...(served.get(secret) ?? []), pod.metadata.name ?? ""].sort());
  }
  return served;
}

/**
 * Reads (through `get`) and, for operator-managed TLS, creates or renews the Secrets. `served` is what the pods
 * mount (servedTlsSecrets): a Secret in it other than spec's is a switch under way, and its CA is trusted too.
 */
export async function ensureTls(
  client: Client,
  cluster: VaultCluster,
  get: (name: string) => Promise<SecretObject | undefined>,
  now: Date,
  signal?: AbortSignal,
  served: ReadonlyMap<string, readonly string[]> = new Map(),
): Promise<TlsState> {
  const current = await sourceTls(client, cluster, tlsSecretName(cluster), get, now, signal);
  const state: TlsState = {
    tls: current.tls,
    ...(current.ca === undefined ? {} : { ca: current.ca }),
    ...described(current.info),
    fingerprints: new Map(),
    issued: current.issued === undefined ? [] : [current.issued],
  };
  if (current.info !== undefined) state.fingerprints.set(tlsSecretName(cluster), current.info.fingerprint);
  const others = [...served].filter(([secret]) => secret !== tlsSecretName(cluster));
  if (others.length === 0) return state;

  const cas = current.ca === undefined ? [] : [current.ca];
  const from: ServedSecret[] = [];
  for (const [secret, pods] of others) {
    const old = await sourceTls(client, cluster, secret, get, now, signal);
    if (old.issued !== undefined) state.issued.push(old.issued);
    if (old.info !== undefined) state.fingerprints.set(secret, old.info.fingerprint);
    if (old.ca !== undefined) cas.push(old.ca);
    from.push({
      secret,
      pods: [...pods],
      ...(old.tls.ready ? {} : { problem: old.tls.message.replace(/^spec\.tls\.secretName: /, "") }),
    });
  }
  state.switching = { to: tlsSecretName(cluster), from };
  if (state.ca !== undefined) state.ca = trustBundle(cas);
  return state;
}

/** One source of the listener certificate as the operator reads (and, for its own, keeps) it. */
interface SourceTls {
  tls: Observed["tls"];
  ca?: string;
  info?: CertificateInfo;
  issued?: { reason: string; message: string };
}

/** The operator's own Secret `<name>-tls` (kept and renewed), or a user's Secret `secretName` read as is. */
function sourceTls(
  client: Client,
  cluster: VaultCluster,
  secretName: string,
  get: (name: string) => Promise<SecretObject | undefined>,
  now: Date,
  signal?: AbortSignal,
): Promise<SourceTls> {
  const operatorManaged = `${clusterRef(cluster).name}-tls`;
  return secretName === operatorManaged && cluster.spec.tls.secretName !== operatorManaged
    ? operatorTls(client, cluster, get, now, signal)
    : userTls(client, cluster, secretName, signal);
}

async function userTls(
  client: Client,
  cluster: VaultCluster,
  secretName: string,
  signal?: AbortSignal,
): Promise<SourceTls> {
  const { namespace } = clusterRef(cluster);
  const secret = await client.get(Secret, secretName, namespace, signal).catch((err: unknown) => {
    if (isNotFound(err)) return undefined;
    throw err;
  });
  const data = secretData(secret);
  const missing = ["tls.crt", "tls.key", "ca.crt"].filter((k) => !data[k]);
  if (secret === undefined || missing.length > 0) {
    return {
      tls: {
        ready: false,
        reason: "TLSSecretMissing",
        message:
          secret === undefined
            ? `spec.tls.secretName: Secret ${namespace}/${secretName} does not exist`
            : `spec.tls.secretName: Secret ${namespace}/${secretName} lacks ${missing.join(", ")}`,
      },
    };
  }
  const info = certificateInfo(data["tls.crt"] ?? "");
  return { tls: { ready: true }, ca: data["ca.crt"] ?? "", ...(info === undefined ? {} : { info }) };
}

/** Operator-managed: the CA first (kept for ten years), then the server certificate it signs. */
async function operatorTls(
  client: Client,
  cluster: VaultCluster,
  get: (name: string) => Promise<SecretObject | undefined>,
  now: Date,
  signal?: AbortSignal,
): Promise<SourceTls> {
  const { name, namespace } = clusterRef(cluster);
  const call = signal === undefined ? {} : { signal };
  const serverName = `${name}-tls`;
  const caSecret = await get(caSecretName(cluster));
  let ca = pairOf(caSecret);
  if (ca === undefined) {
    // A new CA: the server certificate below is issued anew too (it is not signed by it), and says so.
    ca = await createCA(`${name}.${namespace} Vault CA`, now);
    await client.create(Secret, tlsSecret(cluster, caSecretName(cluster), ca), call).catch((err: unknown) => {
      if (!isAlreadyExists(err)) throw err;
    });
  }
  const hosts = tlsHosts(cluster);
  const serverSecret = await get(serverName);
  const current = pairOf(serverSecret);
  const renewBefore = parseGoDuration(cluster.spec.tls.renewBefore ?? "720h");
  const why = renewalReason(current, ca.cert, hosts, now, renewBefore);
  if (why === undefined && current !== undefined) {
    const info = certificateInfo(current.cert);
    return { tls: { ready: true }, ca: ca.cert, ...(info === undefined ? {} : { info }) };
  }
  const duration = parseGoDuration(cluster.spec.tls.duration ?? "2160h");
  const pair = await issueServerCertificate(ca, hosts, now, duration);
  const desired = tlsSecret(cluster, serverName, pair, ca.cert);
  if (serverSecret === undefined) {
    await client.create(Secret, desired, call).catch((err: unknown) => {
      if (!isAlreadyExists(err)) throw err;
    });
  } else {
    await client.patch(Secret, serverName, namespace, { data: desired.data }, "merge", call);
  }
  // What the certificate says (X.509 keeps whole seconds), so status and the served certificate agree exactly.
  const info = certificateInfo(pair.cert);
  const notAfter = info?.notAfter ?? new Date(now.getTime() + duration);
  const served =
    cluster.spec.tls.secretName === undefined
      ? "the pods reload it on SIGHUP"
      : `pods still serve it while they move to Secret ${cluster.spec.tls.secretName} (spec.tls.secretName), and reload it on SIGHUP`;
  return {
    tls: { ready: true },
    ca: ca.cert,
    ...(info === undefined ? {} : { info }),
    issued: {
      reason: current === undefined ? "CertificateIssued" : "CertificateRenewed",
      message: `${current === undefined ? "issued" : `renewed (${why})`} the server certificate in Secret ${serverName}, valid until ${notAfter.toISOString()}; ${served}`,
    },
  };
}

function described(info: CertificateInfo | undefined): Pick<TlsState, "notAfter" | "fingerprint"> {
  return info === undefined ? {} : { notAfter: info.notAfter, fingerprint: info.fingerprint };
}

function pairOf(secret: SecretObject | undefined): CertificatePair | undefined {
  const data = secretData(secret);
  const cert = data["tls.crt"];
  const key = data["tls.key"];
  return cert && key ? { cert, key } : undefined;
}

/** TLSReady's reason while pods serve another certificate source than spec's. */
export const TLS_SWITCHING = "Switching";

/** TLSReady's reason and message during a switch (none otherwise, or while spec's certificate is not in place). */
export function tlsSwitchStatus(tls: TlsState): { reason?: string; message?: string } {
  if (!tls.tls.ready || tls.switching === undefined) return {};
  const from = tls.switching.from
    .map(
      (f) =>
        `${f.pods.join(", ")} still serve${f.pods.length === 1 ? "s" : ""} Secret ${f.secret}${f.problem === undefined ? "" : ` (its CA cannot be read: ${f.problem})`}`,
    )
    .join("; ");
  return {
    reason: TLS_SWITCHING,
    message: `switching the listener certificate to Secret ${tls.switching.to}: ${from}; the operator trusts the old and the new CA until every pod is restarted onto Secret ${tls.switching.to}, one at a time (the active one last, after a step-down)`,
  };
}
