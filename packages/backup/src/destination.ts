// Where a snapshot is stored and read from: an S3 bucket (with its credentials Secret, endpoint and CA) or a
// PersistentVolumeClaim. The types, and the schema builders every backup kind uses (an EtcdBackup's and a
// VaultSnapshot's destination, a restore's source): the words that differ per operator (the owner kind, the path
// of a file, an example prefix) are parameters, the fields and rules are the same. The schemas are TypeBox's, and
// the types are derived from them: one source for each field.
import type { JSONSchemaProps } from "@capstan/core";
import * as Type from "typebox/type";

/** The S3 region used unless `s3.region` says otherwise. */
export const DEFAULT_S3_REGION = "us-east-1";
/** Keys of the credentials Secret read unless `s3.credentialsSecret` names others. */
export const DEFAULT_ACCESS_KEY_ID_KEY = "AWS_ACCESS_KEY_ID";
export const DEFAULT_SECRET_ACCESS_KEY_KEY = "AWS_SECRET_ACCESS_KEY";
/** Key of the CA Secret read unless `s3.caSecret.key` names another. */
export const DEFAULT_CA_KEY = "ca.crt";

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

const secretName = (description: string) => Type.String({ description, minLength: 1, maxLength: 253 });

function credentialsSecretSchema(resource: string) {
  return Type.Object(
    {
      name: secretName("Secret name."),
      accessKeyIDKey: Type.Optional(
        Type.String({
          description: "Key of the access key ID.",
          default: DEFAULT_ACCESS_KEY_ID_KEY,
          maxLength: 253,
        }),
      ),
      secretAccessKeyKey: Type.Optional(
        Type.String({
          description: "Key of the secret access key.",
          default: DEFAULT_SECRET_ACCESS_KEY_KEY,
          maxLength: 253,
        }),
      ),
    },
    { description: `Secret, in the ${resource}'s namespace, holding the access key.` },
  );
}

function caSecretSchema(resource: string) {
  return Type.Object(
    {
      name: secretName("Secret name."),
      key: Type.Optional(
        Type.String({ description: "Key of the bundle.", default: DEFAULT_CA_KEY, maxLength: 253 }),
      ),
    },
    {
      description: `Secret, in the ${resource}'s namespace, holding a PEM CA bundle to trust for the endpoint.`,
    },
  );
}

function s3DestinationSchema(naming: DestinationNaming) {
  return Type.Object(
    {
      endpoint: Type.Optional(
        Type.String({
          description: "Endpoint URL, e.g. https://minio.storage.svc:9000 (default: AWS S3 for the region).",
          maxLength: 2048,
          "x-kubernetes-validations": [
            {
              rule: "isURL(self) && url(self).getScheme() in ['http', 'https']",
              message: "destination.s3.endpoint must be an http:// or https:// URL",
            },
          ],
        }),
      ),
      bucket: Type.String({
        description: "Bucket name.",
        minLength: 3,
        maxLength: 63,
        pattern: "^[a-z0-9][a-z0-9.-]*[a-z0-9]$",
      }),
      prefix: Type.Optional(
        Type.String({
          description: `Key prefix, without a leading or trailing "/" (e.g. ${naming.prefixExample}).`,
          maxLength: 512,
          "x-kubernetes-validations": [
            {
              rule: "!self.startsWith('/') && !self.endsWith('/')",
              message: 'destination.s3.prefix must not start or end with "/"',
            },
          ],
        }),
      ),
      region: Type.Optional(
        Type.String({ description: "Region.", default: DEFAULT_S3_REGION, maxLength: 64 }),
      ),
      forcePathStyle: Type.Optional(
        Type.Boolean({
          description:
            "Address the bucket as <endpoint>/<bucket> rather than <bucket>.<endpoint> (what most S3-compatible servers need).",
        }),
      ),
      credentialsSecret: credentialsSecretSchema(naming.resource),
      caSecret: Type.Optional(caSecretSchema(naming.resource)),
    },
    {
      description: `An S3-compatible bucket; the object key is <prefix>/${naming.path} (the uid keeps it unique when several Kubernetes clusters share a bucket), uploaded in parts.`,
    },
  );
}

function pvcDestinationSchema(naming: DestinationNaming) {
  return Type.Object(
    {
      claimName: secretName("Claim name."),
      directory: Type.Optional(
        Type.String({
          description: 'Directory inside the volume, without a leading "/" (default: the root).',
          maxLength: 512,
          "x-kubernetes-validations": [
            {
              rule: "!self.startsWith('/') && !self.split('/').exists(p, p == '..')",
              message: 'destination.pvc.directory must be a relative path without ".."',
            },
          ],
        }),
      ),
    },
    {
      description: `A PersistentVolumeClaim no ${naming.owner} owns, in the ${naming.resource}'s namespace; the file is <directory>/${naming.path}.`,
    },
  );
}

function backupDestinationSchema(s3: S3DestinationSchema, pvc: PVCDestinationSchema) {
  return Type.Object(
    { s3: Type.Optional(s3), pvc: Type.Optional(pvc) },
    {
      description: "Where the snapshot goes: exactly one of s3 or pvc.",
      "x-kubernetes-validations": [
        { rule: "has(self.s3) != has(self.pvc)", message: "destination: set exactly one of s3 or pvc" },
      ],
    },
  );
}

/** The schema of destination.s3. */
export type S3DestinationSchema = ReturnType<typeof s3DestinationSchema>;
/** The schema of destination.pvc. */
export type PVCDestinationSchema = ReturnType<typeof pvcDestinationSchema>;
/** The schema of spec.destination. */
export type BackupDestinationSchema = ReturnType<typeof backupDestinationSchema>;

/** A Secret holding S3 credentials, in the backup's namespace (keys default to AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY). */
export type S3CredentialsSecret = Type.Static<ReturnType<typeof credentialsSecretSchema>>;

/** A key of a Secret in the backup's namespace. */
export type SecretKeyRef = Type.Static<ReturnType<typeof caSecretSchema>>;

/** An S3-compatible bucket; the object key is `<prefix>/<namespace>/<cluster>/<backup>-<backup uid>.<ext>`. */
export type S3Destination = Type.Static<S3DestinationSchema>;

/** A PersistentVolumeClaim that no cluster owns; the file is `<directory>/<namespace>/<cluster>/<backup>-<uid>.<ext>`. */
export type PVCDestination = Type.Static<PVCDestinationSchema>;

/** Where a snapshot goes: exactly one of `s3` or `pvc`. */
export type BackupDestination = Type.Static<BackupDestinationSchema>;

/** An S3 object holding a snapshot (a restore's source): the destination's fields without `prefix`, with `key`. */
export type S3Source = Type.Static<S3SourceSchema>;

/** A snapshot file on a PersistentVolumeClaim no cluster owns (mounted read-only). */
export type PVCSource = Type.Static<PVCSourceSchema>;

/** The schemas of a destination, from one operator's words. */
export interface DestinationSchemas {
  /** destination.s3. */
  s3: S3DestinationSchema;
  /** destination.pvc. */
  pvc: PVCDestinationSchema;
  /** spec.destination: exactly one of s3 or pvc. */
  destination: BackupDestinationSchema;
}

/** The destination schemas with `naming`'s words. */
export function destinationSchemas(naming: DestinationNaming): DestinationSchemas {
  const s3 = s3DestinationSchema(naming);
  const pvc = pvcDestinationSchema(naming);
  return { s3, pvc, destination: backupDestinationSchema(s3, pvc) };
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
export function s3SourceSchema(s3: S3DestinationSchema, field: string, description: string, example: string) {
  const { prefix: _prefix, ...properties } = s3.properties;
  return Type.Object(
    {
      ...properties,
      key: Type.String({
        description: "The object's key.",
        minLength: 1,
        maxLength: 1024,
        "x-kubernetes-validations": relativeFileRule(`${field}.s3.key`, example),
      }),
    },
    { description },
  );
}

/** The schema of a restore's S3 source. */
export type S3SourceSchema = ReturnType<typeof s3SourceSchema>;

/** The schema of a restore's claim source: `{claimName, path}`, mounted read-only. */
export function pvcSourceSchema(field: string, description: string, example: string) {
  return Type.Object(
    {
      claimName: Type.String({ minLength: 1, maxLength: 253 }),
      path: Type.String({
        description: 'The file inside the volume, without a leading "/".',
        minLength: 1,
        maxLength: 1024,
        "x-kubernetes-validations": relativeFileRule(`${field}.pvc.path`, example),
      }),
    },
    { description },
  );
}

/** The schema of a restore's claim source. */
export type PVCSourceSchema = ReturnType<typeof pvcSourceSchema>;
