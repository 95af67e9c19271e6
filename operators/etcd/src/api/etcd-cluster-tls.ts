// spec.tls of an EtcdCluster: where the peer and client certificates come from (operatorManaged, an existing
// Secret, or cert-manager), its TypeScript types and its schema with the CEL rules that keep each source immutable.
import { GO_DURATION_PATTERN, goDurationSchema } from "@capstan/core";
import * as Type from "typebox/type";

const operatorManagedSchema = Type.Object(
  {
    validity: Type.Optional(goDurationSchema("Lifetime of each leaf certificate (Go duration).", "2160h")),
    renewBefore: Type.Optional(
      goDurationSchema("Renew a certificate with less than this left (Go duration).", "720h"),
    ),
  },
  {
    description: "The operator makes a CA and certificates it signs, and renews them before they expire.",
    "x-kubernetes-validations": [
      {
        rule: "duration(self.renewBefore) < duration(self.validity)",
        message: "tls.operatorManaged: renewBefore must be shorter than validity",
      },
    ],
  },
);

/**
 * Certificates the operator makes and renews: a CA per cluster and per endpoint, and leaves it signs (validity
 * default "2160h", 90 days; renewBefore default "720h", 30 days, below validity).
 */
export type EtcdOperatorManagedTLS = Type.Static<typeof operatorManagedSchema>;

/** cert-manager's own bounds (its webhook refuses shorter): a certificate lives 1h at least, renews 5m before. */
export const CERT_MANAGER_MIN_DURATION = "1h";
export const CERT_MANAGER_MIN_RENEW_BEFORE = "5m";

const issuerRefSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 253 }),
    kind: Type.Optional(Type.Enum(["Issuer", "ClusterIssuer"], { type: "string", default: "Issuer" })),
    // Another group for external issuers.
    group: Type.Optional(Type.String({ default: "cert-manager.io", minLength: 1, maxLength: 253 })),
  },
  {
    description:
      "The cert-manager Issuer (in the cluster's namespace) or ClusterIssuer that signs. Immutable.",
  },
);

/** A cert-manager Issuer (default, in the cluster's namespace) or ClusterIssuer, of group cert-manager.io by default. */
export type EtcdCertManagerIssuerRef = Type.Static<typeof issuerRefSchema>;

const certManagerSchema = Type.Object(
  {
    issuerRef: issuerRefSchema,
    duration: Type.Optional(
      Type.String({
        description:
          "Lifetime of each certificate (Go duration, at least 1h; default: cert-manager's, 90 days).",
        maxLength: 32,
        pattern: GO_DURATION_PATTERN,
      }),
    ),
    renewBefore: Type.Optional(
      Type.String({
        description:
          "Renew a certificate with less than this left (Go duration, at least 5m, below duration; default: cert-manager's, a third of the lifetime).",
        maxLength: 32,
        pattern: GO_DURATION_PATTERN,
      }),
    ),
  },
  {
    description:
      "cert-manager issues the certificates: the operator creates and owns a Certificate per certificate (each member's, the operator's client, the backup Jobs' client) with the Secret names the members mount. The issuer must fill ca.crt (a CA or Vault issuer, not ACME).",
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
  },
);

/**
 * Certificates issued by cert-manager: the operator creates and owns a cert-manager Certificate per certificate it
 * would issue itself (each member's, the operator's client, the backup Jobs' client), written by cert-manager to
 * the Secrets the members, the operator and the backup Jobs read.
 */
export type EtcdCertManagerTLS = Type.Static<typeof certManagerSchema>;

function tlsEndpointSchema(what: string) {
  return Type.Object(
    {
      operatorManaged: Type.Optional(operatorManagedSchema),
      // tls.crt must be usable as both server and client certificate, for every member's name.
      secretRef: Type.Optional(
        Type.Object(
          { name: Type.String({ minLength: 1, maxLength: 253 }) },
          {
            description:
              "An existing Secret (ca.crt, tls.crt, tls.key) in the cluster's namespace; read, never written.",
          },
        ),
      ),
      certManager: Type.Optional(certManagerSchema),
    },
    {
      description: `TLS of the ${what}: operatorManaged (the default when none is set), secretRef or certManager.`,
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
    },
  );
}

/** Where one endpoint's (peer or client) certificates come from: at most one of the three (default operatorManaged). */
export type EtcdTLSEndpoint = Type.Static<ReturnType<typeof tlsEndpointSchema>>;

/** The schema of spec.tls. */
export const tlsSchema = Type.Object(
  {
    // Member to member (port 2380): mutual TLS, only certificates of the peer CA are accepted.
    peer: Type.Optional(tlsEndpointSchema("peer port")),
    // Clients (port 2379): HTTPS with client certificate authentication (--client-cert-auth).
    client: Type.Optional(tlsEndpointSchema("client port")),
  },
  {
    description:
      "TLS of the peer and client ports. Set when the cluster is created: turning TLS on or off later is not supported yet.",
    "x-kubernetes-validations": [
      {
        // A member's certificate is one Secret per source; cert-manager's and the operator's would share its name.
        rule: "!has(self.peer) || !has(self.client) || (!has(self.peer.certManager) && !has(self.client.certManager)) || ((has(self.peer.certManager) || has(self.peer.secretRef)) && (has(self.client.certManager) || has(self.client.secretRef)))",
        message:
          "tls: certManager on one port cannot be combined with operatorManaged on the other; use certManager (or secretRef) for both",
      },
    ],
  },
);

/** TLS of the peer and client ports; each is immutable once the cluster is created. */
export type EtcdTLS = Type.Static<typeof tlsSchema>;
