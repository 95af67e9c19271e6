// Where an etcd backup is stored and read from: an S3 bucket (with its credentials Secret, endpoint and CA) or a
// PersistentVolumeClaim; the types and the schema shared by EtcdBackup, EtcdBackupSchedule's template and an
// EtcdRestore's source. The fields and rules are @capstan/backup's (the Vault operator's VaultSnapshot has the same);
// here are etcd's words for them.
import { destinationSchemas } from "@capstan/backup";

export {
  type BackupDestination,
  DEFAULT_ACCESS_KEY_ID_KEY,
  DEFAULT_CA_KEY,
  DEFAULT_S3_REGION,
  DEFAULT_SECRET_ACCESS_KEY_KEY,
  NAME_RULE,
  type PVCDestination,
  type S3CredentialsSecret,
  type S3Destination,
  type SecretKeyRef,
} from "@capstan/backup";

const schemas = destinationSchemas({
  path: "<namespace>/<cluster>/<backup>-<backup uid>.db",
  owner: "EtcdCluster",
  prefixExample: "etcd/prod",
  resource: "backup",
});

export const s3Schema = schemas.s3;

/** The schema of spec.destination. */
export const destinationSchema = schemas.destination;
