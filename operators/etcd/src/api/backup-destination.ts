// Where an etcd backup is stored and read from: an S3 bucket (with its credentials Secret, endpoint and CA) or a
// PersistentVolumeClaim; the types and the schema shared by EtcdBackup, EtcdBackupSchedule's template and an
// EtcdRestore's source.
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

/** An S3-compatible bucket; the object key is `<prefix>/<namespace>/<cluster>/<backup>-<backup uid>.db`. */
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

/** A PersistentVolumeClaim that no EtcdCluster owns; the file is `<directory>/<namespace>/<cluster>/<backup>-<backup uid>.db`. */
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

/** A Kubernetes object name (DNS label). */
export const NAME_RULE = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";

const secretName = (description: string): JSONSchemaProps => ({
  type: "string",
  description,
  minLength: 1,
  maxLength: 253,
});

export const s3Schema: JSONSchemaProps = {
  type: "object",
  description:
    "An S3-compatible bucket; the object key is <prefix>/<namespace>/<cluster>/<backup>-<backup uid>.db (the uid keeps it unique when several Kubernetes clusters share a bucket), uploaded in parts.",
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
      description: 'Key prefix, without a leading or trailing "/" (e.g. etcd/prod).',
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
      description: "Secret, in the backup's namespace, holding the access key.",
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
      description: "Secret, in the backup's namespace, holding a PEM CA bundle to trust for the endpoint.",
      required: ["name"],
      properties: {
        name: secretName("Secret name."),
        key: { type: "string", description: "Key of the bundle.", default: DEFAULT_CA_KEY, maxLength: 253 },
      },
    },
  },
};

const pvcSchema: JSONSchemaProps = {
  type: "object",
  description:
    "A PersistentVolumeClaim no EtcdCluster owns, in the backup's namespace; the file is <directory>/<namespace>/<cluster>/<backup>-<backup uid>.db.",
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

/** The schema of spec.destination. */
export const destinationSchema: JSONSchemaProps = {
  type: "object",
  description: "Where the snapshot goes: exactly one of s3 or pvc.",
  properties: { s3: s3Schema, pvc: pvcSchema },
  "x-kubernetes-validations": [
    {
      rule: "has(self.s3) != has(self.pvc)",
      message: "destination: set exactly one of s3 or pvc",
    },
  ],
};
