// How a Job's container reaches S3: the access key from the credentials Secret as the AWS SDK's environment
// variables, and the endpoint's CA bundle (caSecret) mounted as a file. The backup Jobs' uploads and the restore
// Jobs' downloads of every operator share it.
import type { Job, ObjectOf } from "@capstan/core";
import {
  DEFAULT_ACCESS_KEY_ID_KEY,
  DEFAULT_CA_KEY,
  DEFAULT_SECRET_ACCESS_KEY_KEY,
  type S3CredentialsSecret,
  type SecretKeyRef,
} from "./destination.ts";

type PodSpec = NonNullable<NonNullable<ObjectOf<typeof Job>["spec"]>["template"]["spec"]>;
type Container = PodSpec["containers"][number];

/** Where the endpoint's CA bundle is mounted in a Job's S3 step. */
export const S3_CA_DIR = "/etc/capstan/s3-ca";
/** The CA bundle's file (the caSecret's key, mounted as ca.crt). */
export const S3_CA_FILE = `${S3_CA_DIR}/ca.crt`;
const S3_CA_VOLUME = "s3-ca";

/** The S3 fields a Job needs: the credentials Secret and, optionally, a CA bundle Secret. */
export interface S3Access {
  credentialsSecret: S3CredentialsSecret;
  caSecret?: SecretKeyRef;
}

/** AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY from the credentials Secret (no `env` without S3). */
export function s3CredentialsEnv(s3: S3Access | undefined): Pick<Container, "env"> {
  if (s3 === undefined) return {};
  const fromSecret = (name: string, key: string) => ({
    name,
    valueFrom: { secretKeyRef: { name: s3.credentialsSecret.name, key } },
  });
  return {
    env: [
      fromSecret("AWS_ACCESS_KEY_ID", s3.credentialsSecret.accessKeyIDKey ?? DEFAULT_ACCESS_KEY_ID_KEY),
      fromSecret(
        "AWS_SECRET_ACCESS_KEY",
        s3.credentialsSecret.secretAccessKeyKey ?? DEFAULT_SECRET_ACCESS_KEY_KEY,
      ),
    ],
  };
}

/** The CA bundle's mount in the S3 step (none without a caSecret). */
export function s3CaMounts(s3: S3Access | undefined): NonNullable<Container["volumeMounts"]> {
  return s3?.caSecret === undefined ? [] : [{ name: S3_CA_VOLUME, mountPath: S3_CA_DIR, readOnly: true }];
}

/** The CA bundle's volume: the caSecret's key as ca.crt (none without a caSecret). */
export function s3CaVolumes(s3: S3Access | undefined): NonNullable<PodSpec["volumes"]> {
  if (s3?.caSecret === undefined) return [];
  return [
    {
      name: S3_CA_VOLUME,
      secret: {
        secretName: s3.caSecret.name,
        items: [{ key: s3.caSecret.key ?? DEFAULT_CA_KEY, path: "ca.crt" }],
      },
    },
  ];
}
