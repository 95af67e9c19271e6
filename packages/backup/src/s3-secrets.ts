// The Secrets an S3 destination names, checked before a Job is made (a Job whose Secret or key is missing would wait
// in CreateContainerConfigError until its deadline), and read when the operator itself talks to S3 (deleting an
// object). Pure over a Secret reader: each operator reads Secrets live (its cache holds only its own).
import {
  DEFAULT_ACCESS_KEY_ID_KEY,
  DEFAULT_CA_KEY,
  DEFAULT_S3_REGION,
  DEFAULT_SECRET_ACCESS_KEY_KEY,
  type S3CredentialsSecret,
  type SecretKeyRef,
} from "./destination.ts";

/** Reads a Secret's data (base64 values) in the backup's namespace; undefined when it does not exist. */
export type SecretDataReader = (name: string) => Promise<Record<string, string> | undefined>;

/** The S3 fields naming Secrets. */
export interface S3SecretRefs {
  credentialsSecret: S3CredentialsSecret;
  caSecret?: SecretKeyRef;
}

/**
 * What the Secrets of `s3` lack (the credentials and the CA bundle), naming the spec field (`field` is the s3
 * object's path, e.g. "spec.destination.s3"); undefined when they hold every key a Job reads.
 */
export async function s3SecretsProblem(
  read: SecretDataReader,
  s3: S3SecretRefs,
  namespace: string,
  field: string,
): Promise<string | undefined> {
  const creds = s3.credentialsSecret;
  const wanted: { secret: string; key: string; secretField: string; keyField: string }[] = [
    {
      secret: creds.name,
      key: creds.accessKeyIDKey ?? DEFAULT_ACCESS_KEY_ID_KEY,
      secretField: `${field}.credentialsSecret.name`,
      keyField: `${field}.credentialsSecret.accessKeyIDKey`,
    },
    {
      secret: creds.name,
      key: creds.secretAccessKeyKey ?? DEFAULT_SECRET_ACCESS_KEY_KEY,
      secretField: `${field}.credentialsSecret.name`,
      keyField: `${field}.credentialsSecret.secretAccessKeyKey`,
    },
    ...(s3.caSecret === undefined
      ? []
      : [
          {
            secret: s3.caSecret.name,
            key: s3.caSecret.key ?? DEFAULT_CA_KEY,
            secretField: `${field}.caSecret.name`,
            keyField: `${field}.caSecret.key`,
          },
        ]),
  ];
  const seen = new Map<string, Record<string, string> | undefined>();
  for (const w of wanted) {
    if (!seen.has(w.secret)) seen.set(w.secret, await read(w.secret));
    const data = seen.get(w.secret);
    if (data === undefined) return `${w.secretField}: Secret ${namespace}/${w.secret} does not exist`;
    if (data[w.key] === undefined)
      return `${w.keyField}: Secret ${namespace}/${w.secret} has no key ${w.key}`;
  }
  return undefined;
}

/** An S3 endpoint's settings with the spec's defaults applied. */
export interface S3Endpoint {
  region: string;
  endpoint?: string;
  forcePathStyle: boolean;
}

/** The endpoint fields of an S3 destination or source, defaults applied. */
export function s3EndpointOf(s3: {
  region?: string;
  endpoint?: string;
  forcePathStyle?: boolean;
}): S3Endpoint {
  return {
    region: s3.region ?? DEFAULT_S3_REGION,
    ...(s3.endpoint === undefined ? {} : { endpoint: s3.endpoint }),
    forcePathStyle: s3.forcePathStyle === true,
  };
}
