// TLS in place for one reconcile: the user's Secrets (secretRef) read as they are, or the operator's CA Secret and
// the certificates it signs (a member's, the operator's client, the backup Jobs' client) issued when missing and
// renewed when notAfter - now < renewBefore. Member pods are annotated with their certificates' fingerprints, so
// the kubelet refreshes the mounted Secret at once; etcd reads the files at each TLS handshake, so nothing restarts.
// The CA rotation (desired/tls-rotation.ts) runs here too, one step per reconcile, only when the membership planner
// finds the cluster in sync; a new member pod is annotated with the CAs it starts trusting.
import {
  type CertificatePair,
  type Client,
  certificateInfo,
  createCA,
  isAlreadyExists,
  isNotFound,
  issueCertificate,
  type PodObject,
  quorum,
  renewalReason,
  Secret,
  type SecretObject,
  secretData,
  signedBy,
  splitPemBundle,
} from "@capstan/core";
import type { EtcdCluster } from "../../api/etcd-cluster.ts";
import { usesCertManager } from "../../desired/cert-manager.ts";
import { CLUSTER_LABEL, clusterRef, MEMBER_LABEL } from "../../desired/names.ts";
import {
  BACKUP_CLIENT_CN,
  backupClientSecretName,
  CERTIFICATES_ANNOTATION,
  caSecretName,
  clientTLS,
  memberCommonName,
  memberHosts,
  memberTLSSecretName,
  OPERATOR_CLIENT_CN,
  operatorClientSecret,
  operatorClientSecretName,
  peerTLS,
  type TLSSource,
  tlsSecret,
} from "../../desired/tls.ts";
import {
  caRenewBeforeMs,
  NEXT_CA_CERT,
  NEXT_CA_KEY,
  planCARotation,
  ROTATE_CA_ANNOTATION,
  ROTATED_FOR_ANNOTATION,
  ROTATION_STARTED_ANNOTATION,
  type RotationInput,
  type RotationMember,
  rotationRequested,
  TRUSTED_CA_ANNOTATION,
} from "../../desired/tls-rotation.ts";
import type { EtcdClientTLS } from "../../etcd/etcd-client.ts";
import type { Step } from "../../plan/plan.ts";
import { prepareCertManagerTLS } from "./cert-manager.ts";
import { type Observation, podGone, podReady } from "./observe.ts";
import {
  type CAState,
  type CertificateInUse,
  type ClusterTLS,
  shortFingerprint,
  type TLSContext,
  type TLSProblem,
} from "./tls-types.ts";

/** Label on the Secrets of member certificates (value: the member), so the ones of removed members are found. */
export const MEMBER_TLS_COMPONENT = "member-tls";

function pairOf(secret: SecretObject | undefined): CertificatePair | undefined {
  const data = secretData(secret);
  const cert = data["tls.crt"];
  const key = data["tls.key"];
  return cert && key ? { cert, key } : undefined;
}

export type { CAState, CertificateInUse, ClusterTLS, TLSProblem } from "./tls-types.ts";
export { shortFingerprint } from "./tls-types.ts";

const NO_TLS: ClusterTLS = {
  ensureMember: async () => "",
  forgetMembersExcept: async () => {},
  podAnnotations: async () => ({}),
  caState: () => undefined,
  inUse: () => [],
  issued: [],
};

const REQUIRED_KEYS = ["ca.crt", "tls.crt", "tls.key"];

/** Reads, issues and renews what the cluster's spec.tls asks for; a problem with a user's Secret is returned. */
export async function prepareTLS(
  ctx: TLSContext,
  cluster: EtcdCluster,
  now: Date,
): Promise<ClusterTLS | TLSProblem> {
  const { client, signal } = ctx;
  const peer = peerTLS(cluster);
  const clientSource = clientTLS(cluster);
  if (peer === undefined && clientSource === undefined) return NO_TLS;
  const { name, namespace } = clusterRef(cluster);
  const call = signal === undefined ? {} : { signal };
  const issued: { reason: string; message: string }[] = [];

  // The user's Secrets, checked.
  const userSecrets = new Map<string, Record<string, string>>();
  const userInUse = new Map<string, CertificateInUse>();
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
    const seen = userInUse.get(source.secretName);
    userInUse.set(source.secretName, {
      secret: source.secretName,
      field: seen === undefined ? field : `${seen.field} and ${field}`,
      source: "secretRef",
      data,
      keys: ["tls.crt", "ca.crt"],
    });
  }
  if (usesCertManager(cluster)) {
    const tls = await prepareCertManagerTLS(ctx, cluster, userSecrets);
    if (isTLSProblem(tls)) return tls;
    return { ...tls, inUse: () => [...userInUse.values(), ...tls.inUse()] };
  }

  // The operator's Secrets of this cluster, in one list.
  const owned = new Map<string, SecretObject>();
  if (peer?.kind === "operatorManaged" || clientSource?.kind === "operatorManaged") {
    const list = await client.list(Secret, { namespace, labelSelector: `${CLUSTER_LABEL}=${name}`, ...call });
    for (const s of list.items) if (s.metadata.name !== undefined) owned.set(s.metadata.name, s);
  }

  // The CA (ten years; its rotation is a separate, deliberate step: rotateCA), created once.
  let ca: CertificatePair | undefined;
  let bundle = "";
  let caSecret: SecretObject | undefined;
  let next: CertificatePair | undefined;
  if (owned.size > 0 || peer?.kind === "operatorManaged" || clientSource?.kind === "operatorManaged") {
    caSecret = owned.get(caSecretName(cluster));
    ca = pairOf(caSecret);
    bundle = secretData(caSecret)["ca.crt"] ?? ca?.cert ?? "";
    const nextCert = secretData(caSecret)[NEXT_CA_CERT];
    const nextKey = secretData(caSecret)[NEXT_CA_KEY];
    if (ca !== undefined && nextCert && nextKey) next = { cert: nextCert, key: nextKey };
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
      caSecret = undefined;
      owned.set(caSecretName(cluster), secret);
      issued.push({
        reason: "CertificateIssued",
        message: `created the cluster CA in Secret ${caSecretName(cluster)}`,
      });
    }
  }

  // The operator's certificates as ensured in this reconcile, by Secret name (the CA's first).
  const ownInUse = new Map<string, CertificateInUse>();
  const operatorField = `spec.tls.${peer?.kind === "operatorManaged" ? "peer" : "client"}.operatorManaged`;
  if (ca !== undefined) {
    const leafValidityMs =
      peer?.kind === "operatorManaged"
        ? peer.validityMs
        : clientSource?.kind === "operatorManaged"
          ? clientSource.validityMs
          : 0;
    ownInUse.set(caSecretName(cluster), {
      secret: caSecretName(cluster),
      field: operatorField,
      source: "operatorManaged",
      data: { "tls.crt": ca.cert },
      keys: ["tls.crt"],
      renewBeforeMs: caRenewBeforeMs(leafValidityMs),
    });
  }

  /**
   * Issues or renews the leaf in Secret `secretName` when renewalReason says so, and records it as in use; returns
   * it.
   */
  const ensureLeaf = async (
    secretName: string,
    source: Extract<TLSSource, { kind: "operatorManaged" }>,
    leaf: { hosts: string[]; commonName: string; usages: ("server" | "client")[] },
    labels: Record<string, string> = {},
    field = operatorField,
  ): Promise<CertificatePair> => {
    const pair = await issueOrRenewLeaf(secretName, source, leaf, labels);
    ownInUse.set(secretName, {
      secret: secretName,
      field,
      source: "operatorManaged",
      data: { "tls.crt": pair.cert },
      keys: ["tls.crt"],
      renewBeforeMs: source.renewBeforeMs,
    });
    return pair;
  };

  /** The leaf in Secret `secretName`, issued or renewed when renewalReason says so. */
  const issueOrRenewLeaf = async (
    secretName: string,
    source: Extract<TLSSource, { kind: "operatorManaged" }>,
    leaf: { hosts: string[]; commonName: string; usages: ("server" | "client")[] },
    labels: Record<string, string>,
  ): Promise<CertificatePair> => {
    if (ca === undefined)
      throw new Error(`EtcdCluster ${namespace}/${name}: no CA to sign ${secretName} with`);
    const existing = owned.get(secretName);
    const current = pairOf(existing);
    // Signed by the CA that signs now: after a rotation switched it, every leaf is issued again.
    const why = renewalReason(current, {
      ca: ca.cert,
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
    const clientField = "spec.tls.client.operatorManaged";
    const mine = await ensureLeaf(
      operatorClientSecretName(cluster),
      clientSource,
      { hosts: [], commonName: OPERATOR_CLIENT_CN, usages: ["client"] },
      {},
      clientField,
    );
    await ensureLeaf(
      backupClientSecretName(cluster),
      clientSource,
      { hosts: [], commonName: BACKUP_CLIENT_CN, usages: ["client"] },
      {},
      clientField,
    );
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
    .map((d) => shortFingerprint(d["tls.crt"] ?? ""))
    .join(",");
  const trusted = ca === undefined ? "" : splitPemBundle(bundle).map(shortFingerprint).join(",");

  const ensureMember = async (member: string): Promise<string> => {
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
    const own = shortFingerprint(pair.cert);
    return userFingerprints === "" ? own : `${own},${userFingerprints}`;
  };

  const leafSource = memberSource ?? clientSource;
  return {
    ...(clientMaterial === undefined ? {} : { client: clientMaterial }),
    issued,
    ensureMember,
    podAnnotations: async (member) => {
      const certificates = await ensureMember(member);
      return {
        ...(certificates === "" ? {} : { [CERTIFICATES_ANNOTATION]: certificates }),
        ...(trusted === "" ? {} : { [TRUSTED_CA_ANNOTATION]: trusted }),
      };
    },
    caState: () => {
      if (ca === undefined) return undefined;
      const leaves = new Map<string, string>();
      for (const [secretName, secret] of owned) {
        const cert = secretData(secret)["tls.crt"];
        if (secretName !== caSecretName(cluster) && cert) leaves.set(secretName, cert);
      }
      return {
        ...(caSecret === undefined ? {} : { secret: caSecret }),
        signing: ca,
        bundle,
        ...(next === undefined ? {} : { next }),
        leafValidityMs: leafSource?.kind === "operatorManaged" ? leafSource.validityMs : 0,
        leaves,
      };
    },
    inUse: () => [...userInUse.values(), ...ownInUse.values()],
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
        ownInUse.delete(secretName);
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

/** What one reconcile's turn of the CA rotation decided: the step to take or report, and an Event for a CA write. */
export interface RotationOutcome {
  step: Step;
  event?: { reason: string; message: string };
}

/**
 * One step of the CA rotation, for a cluster the membership planner found in sync (so it never runs beside a
 * scale, upgrade, restart or replacement). The CA Secret's steps are written here; a member restart comes back as
 * the planner's RestartMember (the pod is deleted and started again on its data), after MoveLeader when it leads.
 * undefined: nothing to do (no operator-managed CA, or no rotation wanted or under way).
 */
export async function rotateCA(
  client: Client,
  cluster: EtcdCluster,
  obs: Observation,
  tls: ClusterTLS,
  now: Date,
  signal?: AbortSignal,
): Promise<RotationOutcome | undefined> {
  const ca = tls.caState();
  const { etcd } = obs.observed;
  if (ca?.secret === undefined || !etcd.reachable) return undefined;
  const { name, namespace } = clusterRef(cluster);
  const call = signal === undefined ? {} : { signal };
  const input = rotationInput(cluster, obs, ca, now);
  const step = planCARotation(input);
  const caName = caSecretName(cluster);
  const patchCA = (patch: Record<string, unknown>) =>
    client.patch(Secret, caName, namespace, patch, "merge", call);
  const b64 = (text: string) => Buffer.from(text).toString("base64");
  const wait = (reason: string, message: string): Step => ({ type: "Wait", reason, message });

  switch (step.type) {
    case "None":
      return undefined;
    case "Wait":
      return { step: wait(`CARotation${step.reason}`, `CA rotation: ${step.message}`) };
    case "CreateNextCA": {
      const asked = cluster.metadata.annotations?.[ROTATE_CA_ANNOTATION];
      const servedFor = asked !== undefined && asked !== "" ? asked : "expiry";
      const nextCA = await createCA({
        commonName: `${name}.${namespace} etcd CA ${now.toISOString()}`,
        organization: "capstan-etcd-operator",
        now,
      });
      await patchCA({
        metadata: {
          annotations: {
            [ROTATED_FOR_ANNOTATION]: servedFor,
            [ROTATION_STARTED_ANNOTATION]: now.toISOString(),
          },
        },
        data: {
          [NEXT_CA_CERT]: b64(nextCA.cert),
          [NEXT_CA_KEY]: b64(nextCA.key),
          "ca.crt": b64(`${ca.bundle.trimEnd()}\n${nextCA.cert}`),
        },
      });
      const why =
        servedFor === "expiry"
          ? `the CA expires at ${certificateInfo(ca.signing.cert)?.notAfter.toISOString()}`
          : `${ROTATE_CA_ANNOTATION}=${servedFor}`;
      const message = `CA rotation started (${why}): created the next CA in Secret ${caName}; every member trusts the old and the new CA after its restart, one member at a time`;
      return { step: wait("CARotationStarted", message), event: { reason: "CARotationStarted", message } };
    }
    case "RestartMember":
      return { step: restartForTrust(cluster, obs, step.name, step.message) };
    case "SwitchSigningCA": {
      const next = ca.next;
      if (next === undefined) throw new Error(`EtcdCluster ${namespace}/${name}: no next CA to switch to`);
      await patchCA({ data: { "tls.crt": b64(next.cert), "tls.key": b64(next.key) } });
      const message = `CA rotation: every member trusts the new CA; it signs from now on (each certificate is issued again, served at the next handshake without a restart)`;
      return { step: wait("CARotationSwitched", message), event: { reason: "CARotationSwitched", message } };
    }
    case "ReissueLeaf":
      await tls.ensureMember(step.name);
      return { step: wait("CARotationReissuing", `CA rotation: issuing ${step.name}'s certificate again`) };
    case "DropOldCA": {
      const next = ca.next;
      if (next === undefined) throw new Error(`EtcdCluster ${namespace}/${name}: no next CA to keep`);
      await patchCA({ data: { "ca.crt": b64(next.cert), [NEXT_CA_CERT]: null, [NEXT_CA_KEY]: null } });
      const message = `CA rotation: every certificate is the new CA's; the old CA is dropped from the trusted bundle, and the members are restarted one at a time to stop trusting it`;
      return {
        step: wait("CARotationOldCADropped", message),
        event: { reason: "CARotationOldCADropped", message },
      };
    }
  }
}

/** The rotation planner's input, from the CA Secret, the leaf Secrets and the member pods' annotations. */
export function rotationInput(cluster: EtcdCluster, obs: Observation, ca: CAState, now: Date): RotationInput {
  const bundlePems = splitPemBundle(ca.bundle);
  const known = [...bundlePems, ...(ca.next === undefined ? [] : [ca.next.cert])];
  const signingCA = shortFingerprint(ca.signing.cert);
  const issuerOf = (leaf: string | undefined): string => {
    if (leaf === undefined) return signingCA;
    const by = known.find((c) => signedBy(leaf, c));
    return by === undefined ? "unknown" : shortFingerprint(by);
  };
  const etcdMembers = obs.observed.etcd.reachable ? obs.observed.etcd.members : [];
  const startedAt = ca.secret?.metadata.annotations?.[ROTATION_STARTED_ANNOTATION];
  /**
   * What a pod without the trusted-ca annotation trusts (one made by an operator that did not record it, or by a
   * disaster recovery): made before any rotation started, the signing CA alone (the only one there was); made
   * since, unknown, so it is restarted once.
   */
  const unrecorded = (pod: PodObject): string[] => {
    if (startedAt === undefined) return [signingCA];
    const made = pod.metadata.creationTimestamp;
    // creationTimestamp has whole seconds: the same second counts as after.
    const before = made !== undefined && Date.parse(made) < Date.parse(startedAt) - 1000;
    return before ? [signingCA] : ["unknown"];
  };
  const members: RotationMember[] = etcdMembers.map((m) => {
    const pod = obs.pods.get(m.name);
    const trusted = pod?.metadata.annotations?.[TRUSTED_CA_ANNOTATION];
    return {
      name: m.name,
      ready: pod !== undefined && !podGone(pod) && podReady(pod),
      trusts: trusted ? trusted.split(",") : pod === undefined ? [signingCA] : unrecorded(pod),
      leafIssuer: issuerOf(ca.leaves.get(memberTLSSecretName(m.name))),
    };
  });
  const clientIssuers =
    clientTLS(cluster)?.kind === "operatorManaged"
      ? [operatorClientSecretName(cluster), backupClientSecretName(cluster)].map((s) =>
          issuerOf(ca.leaves.get(s)),
        )
      : [];
  return {
    requested: rotationRequested({
      asked: cluster.metadata.annotations?.[ROTATE_CA_ANNOTATION],
      servedFor: ca.secret?.metadata.annotations?.[ROTATED_FOR_ANNOTATION],
      caNotAfter: certificateInfo(ca.signing.cert)?.notAfter,
      now,
      renewBeforeMs: caRenewBeforeMs(ca.leafValidityMs),
    }),
    signingCA,
    bundle: bundlePems.map(shortFingerprint),
    ...(ca.next === undefined ? {} : { nextCA: shortFingerprint(ca.next.cert) }),
    clientIssuers,
    members,
  };
}

/**
 * The planner's step that restarts member `name` so etcd reads the trusted bundle again: MoveLeader first when it
 * leads, and only when the other voters keep a quorum (a lone member restarts on its data; with ephemeral storage
 * a restart loses the member's data, so it is never the last one).
 */
function restartForTrust(cluster: EtcdCluster, obs: Observation, name: string, message: string): Step {
  const members = obs.observed.etcd.reachable ? obs.observed.etcd.members : [];
  const member = members.find((m) => m.name === name);
  if (member === undefined) {
    return {
      type: "Wait",
      reason: "CARotationMemberUnknown",
      message: `CA rotation: ${name} is not a member`,
    };
  }
  const voters = members.filter((m) => !m.isLearner);
  const others = voters.filter((m) => m !== member && m.healthy);
  if (member.leader) {
    const to = others.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))[0];
    if (to !== undefined) {
      return {
        type: "MoveLeader",
        from: member.id,
        to: to.id,
        toName: to.name,
        message: `moving leadership from ${name} to ${to.name} before restarting it for the CA rotation`,
      };
    }
  }
  const ephemeral = cluster.spec.storage.ephemeral === true;
  if ((voters.length > 1 || ephemeral) && !member.isLearner && others.length < quorum(voters.length)) {
    return {
      type: "Wait",
      reason: "CARotationQuorumAtRisk",
      message: `CA rotation: not restarting ${name}: ${others.length} of ${voters.length} voters would stay healthy, below a quorum`,
    };
  }
  return { type: "RestartMember", id: member.id, name, message: `CA rotation: ${message}` };
}
