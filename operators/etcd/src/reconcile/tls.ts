// TLS in place for one reconcile: the user's Secrets (secretRef) read as they are, or the operator's CA Secret and
// the certificates it signs (a member's, the operator's client, the backup Jobs' client) issued when missing and
// renewed when notAfter - now < renewBefore. Member pods are annotated with their certificates' fingerprints, so
// the kubelet refreshes the mounted Secret at once; etcd reads the files at each TLS handshake, so nothing restarts.
import {
  type CertificatePair,
  type Client,
  certificateInfo,
  createCA,
  isAlreadyExists,
  isNotFound,
  issueCertificate,
  renewalReason,
  Secret,
} from "@capstan/core";
import type { EtcdCluster } from "../api/etcd-cluster.ts";
import { CLUSTER_LABEL, clusterRef, MEMBER_LABEL } from "../desired/names.ts";
import {
  BACKUP_CLIENT_CN,
  backupClientSecretName,
  caSecretName,
  clientTLS,
  memberCommonName,
  memberHosts,
  memberTLSSecretName,
  OPERATOR_CLIENT_CN,
  operatorClientSecret,
  operatorClientSecretName,
  peerTLS,
  type SecretObject,
  type TLSSource,
  tlsSecret,
} from "../desired/tls.ts";
import type { EtcdClientTLS } from "../etcd/etcd-client.ts";

/** Label on the Secrets of member certificates (value: the member), so the ones of removed members are found. */
export const MEMBER_TLS_COMPONENT = "member-tls";

/** The PEM texts of a Secret's data. */
export function secretData(secret: SecretObject | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(secret?.data ?? {})) out[k] = Buffer.from(v, "base64").toString("utf8");
  for (const [k, v] of Object.entries(secret?.stringData ?? {})) out[k] = v;
  return out;
}

function pairOf(secret: SecretObject | undefined): CertificatePair | undefined {
  const data = secretData(secret);
  const cert = data["tls.crt"];
  const key = data["tls.key"];
  return cert && key ? { cert, key } : undefined;
}

/** TLS of one cluster for one reconcile. */
export interface ClusterTLS {
  /** What the operator's etcd client uses (undefined: the client port is plain HTTP). */
  client?: EtcdClientTLS;
  /**
   * Makes sure `member` has a current certificate (issuing or renewing it) and returns the value of its pod's
   * certificates annotation ("" without TLS).
   */
  ensureMember(member: string): Promise<string>;
  /** Deletes the certificate Secrets of members not in `keep`. */
  forgetMembersExcept(keep: ReadonlySet<string>): Promise<void>;
  /** What was issued or renewed so far, for Events. */
  readonly issued: { reason: string; message: string }[];
}

/** Why TLS is not in place (a user's Secret missing or incomplete): the cluster is Degraded until it is. */
export interface TLSProblem {
  reason: string;
  field: string;
  message: string;
}

const NO_TLS: ClusterTLS = {
  ensureMember: async () => "",
  forgetMembersExcept: async () => {},
  issued: [],
};

const REQUIRED_KEYS = ["ca.crt", "tls.crt", "tls.key"];

/** Reads, issues and renews what the cluster's spec.tls asks for; a problem with a user's Secret is returned. */
export async function prepareTLS(
  client: Client,
  cluster: EtcdCluster,
  now: Date,
  signal?: AbortSignal,
): Promise<ClusterTLS | TLSProblem> {
  const peer = peerTLS(cluster);
  const clientSource = clientTLS(cluster);
  if (peer === undefined && clientSource === undefined) return NO_TLS;
  const { name, namespace } = clusterRef(cluster);
  const call = signal === undefined ? {} : { signal };
  const issued: { reason: string; message: string }[] = [];

  // The user's Secrets, checked.
  const userSecrets = new Map<string, Record<string, string>>();
  for (const [field, source] of [
    ["spec.tls.peer.secretRef", peer],
    ["spec.tls.client.secretRef", clientSource],
  ] as const) {
    if (source?.kind !== "secretRef") continue;
    const secret = await client.get(Secret, source.secretName, namespace, signal).catch((err: unknown) => {
      if (isNotFound(err)) return undefined;
      throw err;
    });
    const data = secretData(secret);
    const missing = REQUIRED_KEYS.filter((k) => !data[k]);
    if (secret === undefined || missing.length > 0) {
      return {
        reason: "TLSSecretMissing",
        field,
        message:
          secret === undefined
            ? `${field}: Secret ${namespace}/${source.secretName} does not exist (create it with ca.crt, tls.crt and tls.key)`
            : `${field}: Secret ${namespace}/${source.secretName} lacks ${missing.join(", ")}`,
      };
    }
    userSecrets.set(source.secretName, data);
  }

  // The operator's Secrets of this cluster, in one list.
  const owned = new Map<string, SecretObject>();
  if (peer?.kind === "operatorManaged" || clientSource?.kind === "operatorManaged") {
    const list = await client.list(Secret, { namespace, labelSelector: `${CLUSTER_LABEL}=${name}`, ...call });
    for (const s of list.items) if (s.metadata.name !== undefined) owned.set(s.metadata.name, s);
  }

  // The CA (ten years; its rotation is a separate, deliberate step), created once.
  let ca: CertificatePair | undefined;
  let bundle = "";
  if (owned.size > 0 || peer?.kind === "operatorManaged" || clientSource?.kind === "operatorManaged") {
    const caSecret = owned.get(caSecretName(cluster));
    ca = pairOf(caSecret);
    bundle = secretData(caSecret)["ca.crt"] ?? ca?.cert ?? "";
    if (ca === undefined) {
      ca = await createCA({
        commonName: `${name}.${namespace} etcd CA`,
        organization: "capstan-etcd-operator",
        now,
      });
      bundle = ca.cert;
      const secret = tlsSecret(cluster, caSecretName(cluster), ca, ca.cert);
      await client.create(Secret, secret, call).catch((err: unknown) => {
        if (!isAlreadyExists(err)) throw err;
      });
      owned.set(caSecretName(cluster), secret);
      issued.push({
        reason: "CertificateIssued",
        message: `created the cluster CA in Secret ${caSecretName(cluster)}`,
      });
    }
  }

  /** Issues or renews the leaf in Secret `secretName` when renewalReason says so; returns its fingerprint. */
  const ensureLeaf = async (
    secretName: string,
    source: Extract<TLSSource, { kind: "operatorManaged" }>,
    leaf: { hosts: string[]; commonName: string; usages: ("server" | "client")[] },
    labels: Record<string, string> = {},
  ): Promise<CertificatePair> => {
    if (ca === undefined)
      throw new Error(`EtcdCluster ${namespace}/${name}: no CA to sign ${secretName} with`);
    const existing = owned.get(secretName);
    const current = pairOf(existing);
    const why = renewalReason(current, {
      ca: bundle,
      hosts: leaf.hosts,
      now,
      renewBeforeMs: source.renewBeforeMs,
      what: `the certificate in Secret ${secretName}`,
    });
    if (why === undefined && current !== undefined) {
      if (secretData(existing)["ca.crt"] !== bundle) {
        // The trusted bundle changed (a CA rotation): the leaf stays, its ca.crt follows.
        await client.patch(
          Secret,
          secretName,
          namespace,
          { data: { "ca.crt": Buffer.from(bundle).toString("base64") } },
          "merge",
          call,
        );
      }
      return current;
    }
    const pair = await issueCertificate(ca, { ...leaf, now, validityMs: source.validityMs });
    const desired = tlsSecret(cluster, secretName, pair, bundle, labels);
    if (existing === undefined) {
      await client.create(Secret, desired, call).catch((err: unknown) => {
        if (!isAlreadyExists(err)) throw err;
      });
    } else {
      await client.patch(Secret, secretName, namespace, { data: desired.data }, "merge", call);
    }
    owned.set(secretName, desired);
    const notAfter = certificateInfo(pair.cert)?.notAfter.toISOString() ?? "?";
    issued.push({
      reason: current === undefined ? "CertificateIssued" : "CertificateRenewed",
      message: `${current === undefined ? "issued" : `renewed (${why})`} the certificate in Secret ${secretName}, valid until ${notAfter}`,
    });
    return pair;
  };

  // The client certificates: the operator's (used now) and the backup Jobs'.
  let clientMaterial: EtcdClientTLS | undefined;
  if (clientSource?.kind === "secretRef") {
    const data = userSecrets.get(clientSource.secretName) ?? {};
    clientMaterial = { ca: data["ca.crt"] ?? "", cert: data["tls.crt"] ?? "", key: data["tls.key"] ?? "" };
  } else if (clientSource?.kind === "operatorManaged") {
    const mine = await ensureLeaf(operatorClientSecretName(cluster), clientSource, {
      hosts: [],
      commonName: OPERATOR_CLIENT_CN,
      usages: ["client"],
    });
    await ensureLeaf(backupClientSecretName(cluster), clientSource, {
      hosts: [],
      commonName: BACKUP_CLIENT_CN,
      usages: ["client"],
    });
    clientMaterial = { ca: bundle, ...mine };
  }

  // A member certificate serves both ports when both are operator-managed; its lifetime is the peer's then.
  const memberSource =
    peer?.kind === "operatorManaged"
      ? peer
      : clientSource?.kind === "operatorManaged"
        ? clientSource
        : undefined;
  const userFingerprints = [...userSecrets.values()]
    .map((d) => certificateInfo(d["tls.crt"] ?? "")?.fingerprint.slice(0, 16) ?? "")
    .join(",");

  return {
    ...(clientMaterial === undefined ? {} : { client: clientMaterial }),
    issued,
    ensureMember: async (member) => {
      if (memberSource === undefined) return userFingerprints;
      const pair = await ensureLeaf(
        memberTLSSecretName(member),
        memberSource,
        {
          hosts: memberHosts(cluster, member),
          commonName: memberCommonName(cluster),
          usages: ["server", "client"],
        },
        { [MEMBER_LABEL]: member, "app.kubernetes.io/component": MEMBER_TLS_COMPONENT },
      );
      const own = certificateInfo(pair.cert)?.fingerprint.slice(0, 16) ?? "";
      return userFingerprints === "" ? own : `${own},${userFingerprints}`;
    },
    forgetMembersExcept: async (keep) => {
      for (const [secretName, secret] of owned) {
        const labels = secret.metadata.labels ?? {};
        const member = labels[MEMBER_LABEL];
        if (labels["app.kubernetes.io/component"] !== MEMBER_TLS_COMPONENT || member === undefined) continue;
        if (keep.has(member)) continue;
        await client.delete(Secret, secretName, namespace, call).catch((err: unknown) => {
          if (!isNotFound(err)) throw err;
        });
        owned.delete(secretName);
      }
    },
  };
}

/** True when prepareTLS found a problem. */
export function isTLSProblem(x: ClusterTLS | TLSProblem): x is TLSProblem {
  return "reason" in x;
}

/**
 * The operator's client TLS of a cluster, read only (for controllers other than the cluster's, e.g. backups):
 * undefined without client TLS or while the cluster controller has not issued it yet.
 */
export async function readClientTLS(
  client: Client,
  cluster: EtcdCluster,
  signal?: AbortSignal,
): Promise<EtcdClientTLS | undefined> {
  const secretName = operatorClientSecret(cluster);
  if (secretName === undefined) return undefined;
  const secret = await client
    .get(Secret, secretName, clusterRef(cluster).namespace, signal)
    .catch((err: unknown) => {
      if (isNotFound(err)) return undefined;
      throw err;
    });
  const data = secretData(secret);
  const [ca, cert, key] = [data["ca.crt"], data["tls.crt"], data["tls.key"]];
  return ca && cert && key ? { ca, cert, key } : undefined;
}
