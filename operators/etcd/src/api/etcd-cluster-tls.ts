// spec.tls of an EtcdCluster: where the peer and client certificates come from (operatorManaged, an existing
// Secret, or cert-manager), its TypeScript types and its schema with the CEL rules that keep each source immutable.
import { GO_DURATION_PATTERN, goDurationSchema, type JSONSchemaProps } from "@capstan/core";

/** Certificates the operator makes and renews: a CA per cluster and per endpoint, and leaves it signs. */
export interface EtcdOperatorManagedTLS {
  /** Lifetime of each leaf certificate, a Go duration (default "2160h", 90 days). */
  validity?: string;
  /** A leaf with less than this left is issued again (default "720h", 30 days); must be below validity. */
  renewBefore?: string;
}

/** A cert-manager Issuer or ClusterIssuer. */
export interface EtcdCertManagerIssuerRef {
  name: string;
  /** "Issuer" (default, in the cluster's namespace) or "ClusterIssuer". */
  kind?: "Issuer" | "ClusterIssuer";
  /** API group of the issuer (default "cert-manager.io"; another group for external issuers). */
  group?: string;
}

/**
 * Certificates issued by cert-manager: the operator creates and owns a cert-manager Certificate per certificate it
 * would issue itself (each member's, the operator's client, the backup Jobs' client), written by cert-manager to
 * the Secrets the members, the operator and the backup Jobs read.
 */
export interface EtcdCertManagerTLS {
  issuerRef: EtcdCertManagerIssuerRef;
  /** Lifetime of each certificate, a Go duration of at least 1h (default: cert-manager's, 90 days). */
  duration?: string;
  /** Renew a certificate with less than this left, at least 5m and below duration (default: cert-manager's). */
  renewBefore?: string;
}

/** Where one endpoint's (peer or client) certificates come from: at most one of the three (default operatorManaged). */
export interface EtcdTLSEndpoint {
  operatorManaged?: EtcdOperatorManagedTLS;
  /**
   * An existing Secret in the cluster's namespace with ca.crt, tls.crt and tls.key; the operator reads it and
   * never writes it. tls.crt must be usable as both server and client certificate, for every member's name.
   */
  secretRef?: { name: string };
  /** A cert-manager issuer that must fill ca.crt (e.g. a CA or Vault issuer); not beside operatorManaged. */
  certManager?: EtcdCertManagerTLS;
}

/** TLS of the peer and client ports; each is immutable once the cluster is created. */
export interface EtcdTLS {
  /** Member to member (port 2380): mutual TLS, only certificates of the peer CA are accepted. */
  peer?: EtcdTLSEndpoint;
  /** Clients (port 2379): HTTPS with client certificate authentication (--client-cert-auth). */
  client?: EtcdTLSEndpoint;
}

const operatorManagedSchema: JSONSchemaProps = {
  type: "object",
  description: "The operator makes a CA and certificates it signs, and renews them before they expire.",
  properties: {
    validity: goDurationSchema("Lifetime of each leaf certificate (Go duration).", "2160h"),
    renewBefore: goDurationSchema("Renew a certificate with less than this left (Go duration).", "720h"),
  },
  "x-kubernetes-validations": [
    {
      rule: "duration(self.renewBefore) < duration(self.validity)",
      message: "tls.operatorManaged: renewBefore must be shorter than validity",
    },
  ],
};

/** cert-manager's own bounds (its webhook refuses shorter): a certificate lives 1h at least, renews 5m before. */
export const CERT_MANAGER_MIN_DURATION = "1h";
export const CERT_MANAGER_MIN_RENEW_BEFORE = "5m";

const certManagerSchema: JSONSchemaProps = {
  type: "object",
  description:
    "cert-manager issues the certificates: the operator creates and owns a Certificate per certificate (each member's, the operator's client, the backup Jobs' client) with the Secret names the members mount. The issuer must fill ca.crt (a CA or Vault issuer, not ACME).",
  required: ["issuerRef"],
  properties: {
    issuerRef: {
      type: "object",
      description:
        "The cert-manager Issuer (in the cluster's namespace) or ClusterIssuer that signs. Immutable.",
      required: ["name"],
      properties: {
        name: { type: "string", minLength: 1, maxLength: 253 },
        kind: { type: "string", enum: ["Issuer", "ClusterIssuer"], default: "Issuer" },
        group: { type: "string", default: "cert-manager.io", minLength: 1, maxLength: 253 },
      },
    },
    duration: {
      type: "string",
      description:
        "Lifetime of each certificate (Go duration, at least 1h; default: cert-manager's, 90 days).",
      maxLength: 32,
      pattern: GO_DURATION_PATTERN,
    },
    renewBefore: {
      type: "string",
      description:
        "Renew a certificate with less than this left (Go duration, at least 5m, below duration; default: cert-manager's, a third of the lifetime).",
      maxLength: 32,
      pattern: GO_DURATION_PATTERN,
    },
  },
  "x-kubernetes-validations": [
    {
      rule: `!has(self.duration) || duration(self.duration) >= duration('${CERT_MANAGER_MIN_DURATION}')`,
      message: `tls.certManager.duration must be at least ${CERT_MANAGER_MIN_DURATION} (cert-manager's minimum)`,
      fieldPath: ".duration",
    },
    {
      rule: `!has(self.renewBefore) || duration(self.renewBefore) >= duration('${CERT_MANAGER_MIN_RENEW_BEFORE}')`,
      message: `tls.certManager.renewBefore must be at least ${CERT_MANAGER_MIN_RENEW_BEFORE} (cert-manager's minimum)`,
      fieldPath: ".renewBefore",
    },
    {
      rule: "!has(self.duration) || !has(self.renewBefore) || duration(self.renewBefore) < duration(self.duration)",
      message: "tls.certManager: renewBefore must be shorter than duration",
      fieldPath: ".renewBefore",
    },
  ],
};

function tlsEndpointSchema(what: string): JSONSchemaProps {
  return {
    type: "object",
    description: `TLS of the ${what}: operatorManaged (the default when none is set), secretRef or certManager.`,
    properties: {
      operatorManaged: operatorManagedSchema,
      secretRef: {
        type: "object",
        description:
          "An existing Secret (ca.crt, tls.crt, tls.key) in the cluster's namespace; read, never written.",
        required: ["name"],
        properties: { name: { type: "string", minLength: 1, maxLength: 253 } },
      },
      certManager: certManagerSchema,
    },
    "x-kubernetes-validations": [
      {
        rule: "!(has(self.operatorManaged) && has(self.secretRef))",
        message: `tls: set at most one of operatorManaged and secretRef for the ${what}`,
      },
      {
        rule: "!has(self.certManager) || !(has(self.operatorManaged) || has(self.secretRef))",
        message: `tls: set at most one of operatorManaged, secretRef and certManager for the ${what}`,
      },
      {
        rule: "has(self.secretRef) == has(oldSelf.secretRef) && (!has(self.secretRef) || self.secretRef.name == oldSelf.secretRef.name)",
        message: `tls: the source of the ${what} certificates (operatorManaged or secretRef and its name) is immutable`,
      },
      {
        rule: "has(self.certManager) == has(oldSelf.certManager) && (!has(self.certManager) || self.certManager.issuerRef == oldSelf.certManager.issuerRef)",
        message: `tls: the source of the ${what} certificates (certManager and its issuerRef) is immutable`,
      },
    ],
  };
}

/** The schema of spec.tls. */
export const tlsSchema: JSONSchemaProps = {
  type: "object",
  description:
    "TLS of the peer and client ports. Set when the cluster is created: turning TLS on or off later is not supported yet.",
  properties: { peer: tlsEndpointSchema("peer port"), client: tlsEndpointSchema("client port") },
  "x-kubernetes-validations": [
    {
      // A member's certificate is one Secret per source; cert-manager's and the operator's would share its name.
      rule: "!has(self.peer) || !has(self.client) || (!has(self.peer.certManager) && !has(self.client.certManager)) || ((has(self.peer.certManager) || has(self.peer.secretRef)) && (has(self.client.certManager) || has(self.client.secretRef)))",
      message:
        "tls: certManager on one port cannot be combined with operatorManaged on the other; use certManager (or secretRef) for both",
    },
  ],
};
