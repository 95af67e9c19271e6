// The undici Agents that reach etcd over TLS: one per TLS material, shared by the clients made per reconcile,
// verifying the members' certificates against the cluster's CA (members are reached by pod IP, which no
// certificate names).
import { createHash } from "node:crypto";
import { Agent } from "undici";

/** PEM texts of an etcd client's TLS: the CA (bundle) to trust, and the client certificate and key. */
export interface EtcdClientTLS {
  ca: string;
  cert: string;
  key: string;
}

/** Agents by TLS material, so clients made per reconcile share connections (bounded: renewals add entries). */
const agents = new Map<string, Agent>();
const MAX_AGENTS = 64;

/**
 * The undici Agent for `tls`. Members are reached by pod IP, which no certificate names: the server
 * certificate is verified against the CA (the per-cluster CA is the identity), not against the address.
 */
export function tlsAgent(tls: EtcdClientTLS): Agent {
  const id = createHash("sha256")
    .update(tls.ca)
    .update("\0")
    .update(tls.cert)
    .update("\0")
    .update(tls.key)
    .digest("hex");
  const existing = agents.get(id);
  if (existing !== undefined) return existing;
  const agent = new Agent({
    connect: {
      ca: tls.ca,
      cert: tls.cert,
      key: tls.key,
      rejectUnauthorized: true,
      checkServerIdentity: () => undefined,
    },
  });
  agents.set(id, agent);
  if (agents.size > MAX_AGENTS) {
    const [oldest] = agents;
    if (oldest !== undefined) {
      agents.delete(oldest[0]);
      void oldest[1].close();
    }
  }
  return agent;
}
