#!/usr/bin/env bash
# Cuts a copy of Vault's source (and of go-discover, which Vault's raft join uses) down to what the e2e suites run,
# for build.sh: raft, file and in-memory storage; the Shamir, AEAD and Transit seals; the kv, pki, transit, ssh and
# totp secrets engines; token, userpass, approle, cert, github, ldap, okta and radius auth; the file, socket and
# syslog audit devices; Kubernetes service registration (the operator's pods label themselves with it: a small
# client of Vault's own, no client-go); the server, operator and client commands. Left out: the other storage
# backends, the cloud KMS seals, the Stackdriver metrics sink, the cloud and database plugins, Consul service
# registration, cloud auto-join, and `vault agent` and `vault proxy`: most of Vault's compile is their cloud SDKs.
# Configuring a part left out fails ("unknown ...", or a panic naming the function where Vault has no error path).
# Every pruned import must still be there (prune fails on one that is gone), so a new Vault version cannot
# silently keep or lose a part.
#   e2e/images/vault/slim.sh PRUNE_BIN VAULT_SRC_DIR DISCOVER_SRC_DIR
set -euo pipefail
prune="${1:?usage: $0 PRUNE_BIN VAULT_SRC_DIR DISCOVER_SRC_DIR}" vault="${2:?}" discover="${3:?}"
v=github.com/hashicorp/vault p=github.com/hashicorp

plugins=(
  "$p/vault-plugin-auth-alicloud" "$p/vault-plugin-auth-azure" "$p/vault-plugin-auth-centrify" "$p/vault-plugin-auth-cf"
  "$p/vault-plugin-auth-gcp/plugin" "$p/vault-plugin-auth-jwt" "$p/vault-plugin-auth-kerberos"
  "$p/vault-plugin-auth-kubernetes" "$p/vault-plugin-auth-oci"
  "$p/vault-plugin-database-couchbase" "$p/vault-plugin-database-elasticsearch" "$p/vault-plugin-database-mongodbatlas"
  "$p/vault-plugin-database-redis" "$p/vault-plugin-database-redis-elasticache" "$p/vault-plugin-database-snowflake"
  "$p/vault-plugin-secrets-ad/plugin" "$p/vault-plugin-secrets-alicloud" "$p/vault-plugin-secrets-azure"
  "$p/vault-plugin-secrets-gcp/plugin" "$p/vault-plugin-secrets-gcpkms" "$p/vault-plugin-secrets-kubernetes"
  "$p/vault-plugin-secrets-mongodbatlas" "$p/vault-plugin-secrets-openldap" "$p/vault-plugin-secrets-terraform"
  "$v/builtin/credential/aws" "$v/builtin/logical/aws" "$v/builtin/logical/consul" "$v/builtin/logical/nomad"
  "$v/builtin/logical/rabbitmq"
  "$v/plugins/database/cassandra" "$v/plugins/database/hana" "$v/plugins/database/influxdb"
  "$v/plugins/database/mongodb" "$v/plugins/database/mssql" "$v/plugins/database/mysql"
  "$v/plugins/database/postgresql" "$v/plugins/database/redshift"
)
"$prune" "$vault/helper/builtinplugins/registry.go" "${plugins[@]}"

physical=()
for b in aerospike alicloudoss azure cassandra cockroachdb consul couchdb dynamodb etcd foundationdb gcs manta mssql \
  mysql oci postgresql s3 spanner swift zookeeper; do physical+=("$v/physical/$b"); done
"$prune" "$vault/command/commands.go" "${physical[@]}" \
  "$p/vault-plugin-auth-alicloud" "$p/vault-plugin-auth-centrify" "$p/vault-plugin-auth-cf" \
  "$p/vault-plugin-auth-gcp/plugin" "$p/vault-plugin-auth-jwt" "$p/vault-plugin-auth-kerberos" \
  "$p/vault-plugin-auth-oci" "$v/builtin/credential/aws" \
  "$v/serviceregistration/consul" \
  -name AgentCommand ProxyCommand AgentGenerateConfigCommand
rm -f "$vault/command/agent.go" "$vault/command/proxy.go" "$vault/command/agent_generate_config.go"

kms=()
for w in alicloudkms awskms azurekeyvault gcpckms ocikms; do kms+=("$p/go-kms-wrapping/wrappers/$w/v2"); done
"$prune" "$vault/internalshared/configutil/kms.go" "${kms[@]}"
"$prune" "$vault/vault/core.go" "$p/go-kms-wrapping/wrappers/awskms/v2" # only for a logger option
"$prune" "$vault/internalshared/configutil/telemetry.go" cloud.google.com/go/monitoring/apiv3 \
  github.com/google/go-metrics-stackdriver github.com/google/go-metrics-stackdriver/vault

"$prune" "$vault/vault/raft.go" "$p/go-discover/provider/k8s"
providers=()
for d in aliyun aws azure digitalocean gce linode mdns os packet scaleway softlayer tencentcloud triton vsphere; do
  providers+=("$p/go-discover/provider/$d")
done
"$prune" "$discover/discover.go" "${providers[@]}"
