// The listener certificate in place: the user's Secret (spec.tls.secretName) read as is, or the operator's CA
// Secret and server certificate Secret, issued when missing and renewed when notAfter - now < renewBefore.
import { type Client, isAlreadyExists, isNotFound, Secret } from "@capstan/core";
import type { VaultCluster } from "../api/vault-cluster.ts";
import { caSecretName, clusterRef, tlsHosts, tlsSecretName } from "../desired/names.ts";
import { type SecretObject, tlsSecret } from "../desired/objects.ts";
import {
  type CertificateInfo,
  type CertificatePair,
  certificateInfo,
  createCA,
  issueServerCertificate,
  parseGoDuration,
  renewalReason,
} from "../desired/tls.ts";
import type { Observed } from "../plan/plan.ts";
import { secretData } from "./observe.ts";

/** What the reconcile learns (and did) about the listener certificate. */
export interface TlsState {
  tls: Observed["tls"];
  /** The CA the server certificate chains to (PEM). */
  ca?: string;
  notAfter?: Date;
  /** The fingerprint of the certificate the pods should serve (see CERTIFICATE_ANNOTATION). */
  fingerprint?: string;
  /** What was written, for an Event. */
  issued?: { reason: string; message: string };
}

/** Reads (through `get`) and, for operator-managed TLS, creates or renews the Secrets. */
export async function ensureTls(
  client: Client,
  cluster: VaultCluster,
  get: (name: string) => Promise<SecretObject | undefined>,
  now: Date,
  signal?: AbortSignal,
): Promise<TlsState> {
  const { name, namespace } = clusterRef(cluster);
  const call = signal === undefined ? {} : { signal };
  if (cluster.spec.tls.secretName !== undefined) {
    const secretName = cluster.spec.tls.secretName;
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
    return { tls: { ready: true }, ca: data["ca.crt"] ?? "", ...described(info) };
  }

  // Operator-managed: the CA first (kept for ten years), then the server certificate it signs.
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
  const serverSecret = await get(tlsSecretName(cluster));
  const current = pairOf(serverSecret);
  const renewBefore = parseGoDuration(cluster.spec.tls.renewBefore ?? "720h");
  const why = renewalReason(current, ca.cert, hosts, now, renewBefore);
  if (why === undefined && current !== undefined) {
    return { tls: { ready: true }, ca: ca.cert, ...described(certificateInfo(current.cert)) };
  }
  const duration = parseGoDuration(cluster.spec.tls.duration ?? "2160h");
  const pair = await issueServerCertificate(ca, hosts, now, duration);
  const desired = tlsSecret(cluster, tlsSecretName(cluster), pair, ca.cert);
  if (serverSecret === undefined) {
    await client.create(Secret, desired, call).catch((err: unknown) => {
      if (!isAlreadyExists(err)) throw err;
    });
  } else {
    await client.patch(Secret, tlsSecretName(cluster), namespace, { data: desired.data }, "merge", call);
  }
  // What the certificate says (X.509 keeps whole seconds), so status and the served certificate agree exactly.
  const info = certificateInfo(pair.cert);
  const notAfter = info?.notAfter ?? new Date(now.getTime() + duration);
  return {
    tls: { ready: true },
    ca: ca.cert,
    ...described(info),
    notAfter,
    issued: {
      reason: current === undefined ? "CertificateIssued" : "CertificateRenewed",
      message: `${current === undefined ? "issued" : `renewed (${why})`} the server certificate in Secret ${tlsSecretName(cluster)}, valid until ${notAfter.toISOString()}; the pods reload it on SIGHUP`,
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
