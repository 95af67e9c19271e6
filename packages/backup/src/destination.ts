// Where a snapshot is stored and read from: an S3 bucket (with its credentials Secret, endpoint and CA) or a
// PersistentVolumeClaim. The types, and the schema builders every backup kind uses (an EtcdBackup's and a
// VaultSnapshot's destination, a restore's source): the words that differ per operator (the owner kind, the path
// of a file, an example prefix) are parameters, the fields and rules are the same.
import type { JSONSchemaProps } from "@capstan/core";

/** The S3 region used unless `s3.region` says otherwise. */
export const DEFAULT_S3_REGION = "us-east-1";
/** Keys of the credentials Secret read unless `s3.credentialsSecret` names others. */
export const DEFAULT_ACCESS_KEY_ID_KEY = "AWS_ACCESS_KEY_ID";
export const DEFAULT_SECRET_ACCESS_KEY_KEY = "AWS_SECRET_ACCESS_KEY";
/** Key of the CA Secret read unless `s3.caSecret.key` names another. */
export const DEFAULT_CA_KEY = "ca.crt";

/** A Secret holding S3 credentials, in the backup's namespace. */
export interface S3CredentialsSecret {
  name: string;
  /** Key of the access key ID (default AWS_ACCESS_KEY_ID). */
  accessKeyIDKey?: string;
  /** Key of the secret access key (default AWS_SECRET_ACCESS_KEY). */
  secretAccessKeyKey?: string;
}

/** A key of a Secret in the backup's namespace. */
export interface SecretKeyRef {
  name: string;
  key?: string;
}

/** An S3-compatible bucket; the object key is `<prefix>/<namespace>/<cluster>/<backup>-<backup uid>.<ext>`. */
export interface S3Destination {
  /** Endpoint URL, e.g. "https://minio.storage.svc:9000" (default: AWS S3 for the region). */
  endpoint?: string;
  bucket: string;
  /** Key prefix, without a leading or trailing "/". */
  prefix?: string;
  region?: string;
  /** Address the bucket as <endpoint>/<bucket> instead of <bucket>.<endpoint> (most S3-compatible servers). */
  forcePathStyle?: boolean;
  credentialsSecret: S3CredentialsSecret;
  /** PEM CA bundle to trust for the endpoint (default: the system's CAs). */
  caSecret?: SecretKeyRef;
}

/** A PersistentVolumeClaim that no cluster owns; the file is `<directory>/<namespace>/<cluster>/<backup>-<uid>.<ext>`. */
export interface PVCDestination {
  claimName: string;
  /** Directory inside the volume, without a leading "/" (default: the volume's root). */
  directory?: string;
}

/** Where a snapshot goes: exactly one of `s3` or `pvc`. */
export interface BackupDestination {
  s3?: S3Destination;
  pvc?: PVCDestination;
}

/** An S3 object holding a snapshot (a restore's source). */
export interface S3Source {
  endpoint?: string;
  bucket: string;
  /** The object's key, e.g. "etcd/prod/ns/demo/demo-1.db". */
  key: string;
  region?: string;
  forcePathStyle?: boolean;
  credentialsSecret: S3CredentialsSecret;
  caSecret?: SecretKeyRef;
}

/** A snapshot file on a PersistentVolumeClaim no cluster owns (mounted read-only). */
export interface PVCSource {
  claimName: string;
  /** The file's path inside the volume, without a leading "/". */
  path: string;
}

/** A Kubernetes object name (DNS label). */
export const NAME_RULE = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";

/** The words of one operator's backup schemas. */
export interface DestinationNaming {
  /** The path below the prefix or directory, e.g. "<namespace>/<cluster>/<backup>-<backup uid>.db". */
  path: string;
  /** The kind whose data claims are refused as a destination, e.g. "EtcdCluster". */
  owner: string;
  /** An example key prefix, e.g. "etcd/prod". */
  prefixExample: string;
  /** What the object is called in descriptions ("backup", "snapshot"): "Secret, in the backup's namespace". */
  resource: string;
}

/** The schemas of a destination, from one operator's words. */
export interface DestinationSchemas {
  /** destination.s3. */
  s3: JSONSchemaProps;
  /** destination.pvc. */
  pvc: JSONSchemaProps;
  /** spec.destination: exactly one of s3 or pvc. */
  destination: JSONSchemaProps;
}

const secretName = (description: string): JSONSchemaProps => ({
  type: "string",
  description,
  minLength: 1,
  maxLength: 253,
});

/** The destination schemas with `naming`'s words. */
export function destinationSchemas(naming: DestinationNaming): DestinationSchemas {
  const s3: JSONSchemaProps = {
    type: "object",
    description: `An S3-compatible bucket; the object key is <prefix>/${naming.path} (the uid keeps it unique when several Kubernetes clusters share a bucket), uploaded in parts.`,
    required: ["bucket", "credentialsSecret"],
    properties: {
      endpoint: {
        type: "string",
        description: "Endpoint URL, e.g. https://minio.storage.svc:9000 (default: AWS S3 for the region).",
        maxLength: 2048,
        "x-kubernetes-validations": [
          {
            rule: "isURL(self) && url(self).getScheme() in ['http', 'https']",
            message: "destination.s3.endpoint must be an http:// or https:// URL",
          },
        ],
      },
      bucket: {
        type: "string",
        description: "Bucket name.",
        minLength: 3,
        maxLength: 63,
        pattern: "^[a-z0-9][a-z0-9.-]*[a-z0-9]$",
      },
      prefix: {
        type: "string",
        description: `Key prefix, without a leading or trailing "/" (e.g. ${naming.prefixExample}).`,
        maxLength: 512,
        "x-kubernetes-validations": [
          {
            rule: "!self.startsWith('/') && !self.endsWith('/')",
            message: 'destination.s3.prefix must not start or end with "/"',
          },
        ],
      },
      region: { type: "string", description: "Region.", default: DEFAULT_S3_REGION, maxLength: 64 },
      forcePathStyle: {
        type: "boolean",
        description:
          "Address the bucket as <endpoint>/<bucket> rather than <bucket>.<endpoint> (what most S3-compatible servers need).",
      },
      credentialsSecret: {
        type: "object",
        description: `Secret, in the ${naming.resource}'s namespace, holding the access key.`,
        required: ["name"],
        properties: {
          name: secretName("Secret name."),
          accessKeyIDKey: {
            type: "string",
            description: "Key of the access key ID.",
            default: DEFAULT_ACCESS_KEY_ID_KEY,
            maxLength: 253,
          },
          secretAccessKeyKey: {
            type: "string",
            description: "Key of the secret access key.",
            default: DEFAULT_SECRET_ACCESS_KEY_KEY,
            maxLength: 253,
          },
        },
      },
      caSecret: {
        type: "object",
        description: `Secret, in the ${naming.resource}'s namespace, holding a PEM CA bundle to trust for the endpoint.`,
        required: ["name"],
        properties: {
          name: secretName("Secret name."),
          key: { type: "string", description: "Key of the bundle.", default: DEFAULT_CA_KEY, maxLength: 253 },
        },
      },
    },
  };
  const pvc: JSONSchemaProps = {
    type: "object",
    description: `A PersistentVolumeClaim no ${naming.owner} owns, in the ${naming.resource}'s namespace; the file is <directory>/${naming.path}.`,
    required: ["claimName"],
    properties: {
      claimName: secretName("Claim name."),
      directory: {
        type: "string",
        description: 'Directory inside the volume, without a leading "/" (default: the root).',
        maxLength: 512,
        "x-kubernetes-validations": [
          {
            rule: "!self.startsWith('/') && !self.split('/').exists(p, p == '..')",
            message: 'destination.pvc.directory must be a relative path without ".."',
          },
        ],
      },
    },
  };
  return {
    s3,
    pvc,
    destination: {
      type: "object",
      description: "Where the snapshot goes: exactly one of s3 or pvc.",
      properties: { s3, pvc },
      "x-kubernetes-validations": [
        {
          rule: "has(self.s3) != has(self.pvc)",
          message: "destination: set exactly one of s3 or pvc",
        },
      ],
    },
  };
}

/** The SHA-256 of a snapshot, as status and specs write it. */
export const SHA256_PATTERN = "^[0-9a-f]{64}$";

/** A CEL rule: a relative file path without ".." or empty parts; `example` ends the message. */
export function relativeFileRule(
  field: string,
  example: string,
): NonNullable<JSONSchemaProps["x-kubernetes-validations"]> {
  return [
    {
      rule: "!self.startsWith('/') && !self.endsWith('/') && !self.split('/').exists(p, p == '..' || p == '')",
      message: `${field} must be a relative file path without "..", e.g. ${example}`,
    },
  ];
}

/**
 * The schema of a restore's S3 source: the destination's S3 fields without `prefix`, with the object's `key`.
 * `field` is how messages name it (e.g. "bootstrap.restore"), `example` an example key.
 */
export function s3SourceSchema(
  s3: JSONSchemaProps,
  field: string,
  description: string,
  example: string,
): JSONSchemaProps {
  const { prefix: _prefix, ...properties } = (s3.properties ?? {}) as Record<string, JSONSchemaProps>;
  return {
    ...s3,
    description,
    required: ["bucket", "key", "credentialsSecret"],
    properties: {
      ...properties,
      key: {
        type: "string",
        description: "The object's key.",
        minLength: 1,
        maxLength: 1024,
        "x-kubernetes-validations": relativeFileRule(`${field}.s3.key`, example),
      },
    },
  };
}

/** The schema of a restore's claim source: `{claimName, path}`, mounted read-only. */
export function pvcSourceSchema(field: string, description: string, example: string): JSONSchemaProps {
  return {
    type: "object",
    description,
    required: ["claimName", "path"],
    properties: {
      claimName: { type: "string", minLength: 1, maxLength: 253 },
      path: {
        type: "string",
        description: 'The file inside the volume, without a leading "/".',
        minLength: 1,
        maxLength: 1024,
        "x-kubernetes-validations": relativeFileRule(`${field}.pvc.path`, example),
      },
    },
  };
}
