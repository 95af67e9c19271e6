#!/usr/bin/env bash
# The main job: the etcd, Vault and Prometheus operators installed by their Helm charts on a real cluster, with a
# sample EtcdCluster, a sample 3-node VaultCluster and a sample Prometheus that scrapes the operators (their charts'
# ServiceMonitors) and the etcd members (a PodMonitor) and loads the charts' alert rules. Builds (once, cached by
# version) and starts the local cluster from upstream sources with a real node, and imports the operators', etcd's,
# Vault's, Prometheus's and busybox's images into it; with CAPSTAN_USE_KUBECONFIG=1 it uses the cluster in
# KUBECONFIG instead (its nodes must be able to pull the images, see docs/operators/*.md), never by accident. The cluster is left running:
# `npm run cluster:down` stops it.
#   npm start                       SAMPLE_NAMESPACE (default "default") holds the samples; SAMPLE=false skips them;
#                                   VAULT=false skips the Vault operator and its sample; PROMETHEUS=false the
#                                   Prometheus operator and its sample
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
local_cluster="$repo/e2e/cluster/local"
# shellcheck source=../e2e/cluster/local/versions.env
source "$local_cluster/versions.env"
cache="${CAPSTAN_CACHE:-$HOME/.cache/capstan}"
log() { printf '[start] %s\n' "$*" >&2; }

# shellcheck source=../e2e/cluster/local/kubeconfig.sh
source "$local_cluster/kubeconfig.sh"
chosen="$(capstan_chosen_kubeconfig "${CAPSTAN_CLUSTER_DIR:-$repo/.cluster}")"
vault="${VAULT:-true}" prom="${PROMETHEUS:-true}"
# The Vault and Prometheus images for the local node (Vault's only in the version the sample runs: the Vault upgrade
# suite's older one is a second full Vault build, minutes cold, that a first run does not need). etcd's image is built
# with the operators' below: its binaries share the cluster's build (etcd itself), about a minute cold.
operands=()
vault_version="$(sed -n 's/^  version: "\([0-9.]*\)".*/\1/p' "$repo/operators/vault/samples/vaultcluster.yaml")"
export VAULT_IMAGE_VERSIONS="v${vault_version:?no spec.version in the Vault sample}"
if [ "$vault" != false ]; then operands+=(vault); fi
if [ "$prom" != false ]; then operands+=(prometheus); fi
operand_images=""
if [ "${#operands[@]}" -gt 0 ] && { [ -z "$chosen" ] || [ "$chosen" = "${CAPSTAN_CLUSTER_DIR:-$repo/.cluster}/kubeconfig" ]; }; then
  # Built (Go, from the module proxy, cached by version) beside the cluster's binaries rather than after them: cold,
  # each is minutes of compiling, and the two together leave no core idle while either downloads or links.
  log "building the ${operands[*]} images in the background (cached by version: cold, minutes; warm, a check)"
  operand_images_log="$(mktemp)"
  bash "$repo/e2e/images/build-all.sh" "${operands[@]}" >/dev/null 2>"$operand_images_log" &
  operand_images=$!
fi
bash "$local_cluster/build.sh" cluster >&2 # Kubernetes, etcd, Helm... (a no-op when cached)
if [ -n "$chosen" ]; then
  export KUBECONFIG="$chosen"
  # The local cluster named explicitly: its node has no registry either.
  if [ "$chosen" = "${CAPSTAN_CLUSTER_DIR:-$repo/.cluster}/kubeconfig" ]; then imported=1; fi
else
  KUBECONFIG="$(bash "$local_cluster/cluster.sh" up)"
  export KUBECONFIG
  log "using the local cluster: export KUBECONFIG=$KUBECONFIG"
  imported=1 # its node has no registry: the images are imported into it
fi
kubectl="$cache/kubernetes-$KUBERNETES_VERSION/bin/kubectl"
# The helm that build.sh made (or CAPSTAN_HELM): the one rule every tool follows (packages/cli/src/find-helm.ts).
helm="$("$repo/node_modules/node/bin/node" "$repo/packages/cli/src/find-helm-main.ts")"

reloader=()
# Built through turbo, which builds each one's dependencies first (@capstan/core, and @capstan/cli, whose tsup
# preset every operator's build imports from its dist/): a clean checkout has no dist/ anywhere.
filters=(--filter=@capstan/etcd-operator)
images=(etcd node etcd-operator)
if [ "$vault" != false ]; then
  filters+=(--filter=@capstan/vault-operator)
  images+=(busybox vault vault-operator)
fi
if [ "$prom" != false ]; then
  filters+=(--filter=@capstan/prometheus-operator)
  images+=(busybox prometheus prometheus-operator)
fi
# With the Prometheus operator, the operator charts ship their ServiceMonitor and alert rules.
monitoring=()
if [ "$prom" != false ]; then monitoring=(--set serviceMonitor.enabled=true --set prometheusRule.enabled=true); fi
log "building the operators"
(cd "$repo" && npm exec -- turbo run build "${filters[@]}" --output-logs=errors-only) >&2
if [ "${imported:-0}" = 1 ]; then
  if [ -n "$operand_images" ] && ! wait "$operand_images"; then
    # The import below builds what is missing again, and fails with its own message if it cannot.
    log "the background build of the ${operands[*]} images failed:" && tail -n 20 "$operand_images_log" >&2
  fi
  log "building and importing the images (${images[*]})"
  bash "$repo/e2e/images/build-all.sh" --import "${images[@]}" >/dev/null
  # The local node has no registry: the Vault and Prometheus pods' sidecars use capstan.local/busybox:1.
  reloader=(--set-string reloaderImage.registry=capstan.local --set-string reloaderImage.repository=busybox
    --set-string reloaderImage.tag=1)
fi

if [ "$prom" != false ]; then
  # Installed first: the other charts render their ServiceMonitors and PrometheusRules only where the cluster serves
  # monitoring.coreos.com/v1, whose CRDs this chart's crds/ holds. Helm creates each on the first install where the
  # cluster has none (an existing one, e.g. prometheus-operator's, is kept), before it renders the chart's own.
  log "installing charts/prometheus-operator (release prometheus-operator in namespace prometheus-operator)"
  "$helm" upgrade --install prometheus-operator "$repo/charts/prometheus-operator" --take-ownership \
    --namespace prometheus-operator --create-namespace --wait --timeout 5m \
    --set serviceMonitor.enabled=true --set prometheusRule.enabled=true "${reloader[@]}" >/dev/null
  "$kubectl" -n prometheus-operator get deploy,pods -l app.kubernetes.io/instance=prometheus-operator >&2
fi

log "installing charts/etcd-operator (release etcd-operator in namespace etcd-operator)"
"$helm" upgrade --install etcd-operator "$repo/charts/etcd-operator" --take-ownership \
  --namespace etcd-operator --create-namespace --wait --timeout 5m "${monitoring[@]}" >/dev/null
"$kubectl" -n etcd-operator get deploy,pods -l app.kubernetes.io/instance=etcd-operator >&2

if [ "$vault" != false ]; then
  log "installing charts/vault-operator (release vault-operator in namespace vault-operator)"
  "$helm" upgrade --install vault-operator "$repo/charts/vault-operator" --take-ownership \
    --namespace vault-operator --create-namespace --wait --timeout 5m "${monitoring[@]}" \
    "${reloader[@]}" >/dev/null
  "$kubectl" -n vault-operator get deploy,pods -l app.kubernetes.io/instance=vault-operator >&2
fi


if [ "${SAMPLE:-true}" != false ]; then
  ns="${SAMPLE_NAMESPACE:-default}"
  log "applying the sample EtcdCluster $ns/demo (operators/etcd/samples/etcdcluster.yaml)"
  "$kubectl" apply -n "$ns" -f "$repo/operators/etcd/samples/etcdcluster.yaml" >&2
  if [ "$vault" != false ]; then
    log "applying the sample VaultCluster $ns/vault-demo (operators/vault/samples/vaultcluster.yaml)"
    vault_sample="$repo/operators/vault/samples/vaultcluster.yaml"
    nodes="$("$kubectl" get nodes --no-headers | wc -l)"
    if [ "$nodes" -lt 3 ]; then
      # Vault's default places one voter per node (spec.podTemplate.antiAffinity: Required), so that no node holds a
      # quorum; on fewer nodes than voters the sample's pods share them instead.
      log "the cluster has $nodes node(s): vault-demo's 3 voters share them (spec.podTemplate.antiAffinity: Preferred)"
      "$kubectl" create --dry-run=client -o json -f "$vault_sample" |
        node -e 'let t="";process.stdin.on("data",(d)=>{t+=d}).on("end",()=>{const o=JSON.parse(t);o.spec.podTemplate={...o.spec.podTemplate,antiAffinity:"Preferred"};process.stdout.write(JSON.stringify(o))})' |
        "$kubectl" apply -n "$ns" -f - >&2
    else
      "$kubectl" apply -n "$ns" -f "$vault_sample" >&2
    fi
  fi
  # All three samples are applied before any wait, so they come up side by side.
  if [ "$prom" != false ]; then
    log "applying the sample Prometheus $ns/prometheus-demo (operators/prometheus/samples/prometheus.yaml) and a PodMonitor of the etcd members"
    "$kubectl" apply -n "$ns" -f "$repo/operators/prometheus/samples/prometheus.yaml" \
      -f "$repo/operators/prometheus/samples/etcd-podmonitor.yaml" >&2
    # The operators serve /metrics to callers the API server authorizes: let the sample's ServiceAccount read them.
    for op in etcd-operator vault-operator prometheus-operator; do
      if [ "$op" = vault-operator ] && [ "$vault" = false ]; then continue; fi
      "$kubectl" create clusterrolebinding "prometheus-demo-reads-$op" --clusterrole="$op-$op-metrics-reader" \
        --serviceaccount="$ns:prometheus-prometheus-demo" --dry-run=client -o yaml | "$kubectl" apply -f - >/dev/null
    done
  fi
  log "waiting for the EtcdCluster to become Available (3 members: about 1-2 minutes)"
  "$kubectl" -n "$ns" wait etcdcluster/demo --for=condition=Available --timeout=10m >&2
  "$kubectl" -n "$ns" wait etcdcluster/demo --for=jsonpath='{.status.readyReplicas}'=3 --timeout=10m >&2
  "$kubectl" -n "$ns" get etcdcluster demo -o wide
  cat >&2 <<MSG

The etcd operator is running and demo is served at $("$kubectl" -n "$ns" get etcdcluster demo -o jsonpath='{.status.clientEndpoint}').
Try:  export KUBECONFIG=$KUBECONFIG
      $kubectl -n $ns scale etcdcluster demo --replicas=5
      $kubectl -n $ns patch etcdcluster demo --type merge -p '{"spec":{"version":"3.6.16"}}'
      $kubectl -n $ns get etcdcluster demo -w
      $kubectl -n etcd-operator logs deploy/etcd-operator -f
Docs: docs/operators/etcd.md.  Stop the local cluster: npm run cluster:down
MSG
  if [ "$vault" != false ]; then
    log "waiting for the VaultCluster to become Available (3 pods initialized, unsealed, raft joined: about 1-3 minutes)"
    "$kubectl" -n "$ns" wait vaultcluster/vault-demo --for=condition=Available --timeout=10m >&2
    "$kubectl" -n "$ns" wait vaultcluster/vault-demo --for=jsonpath='{.status.readyReplicas}'=3 --timeout=10m >&2
    "$kubectl" -n "$ns" get vaultcluster vault-demo -o wide
    cat >&2 <<MSG

The Vault operator is running and vault-demo is served at $("$kubectl" -n "$ns" get vaultcluster vault-demo -o jsonpath='{.status.endpoint}')
(active node: $("$kubectl" -n "$ns" get vaultcluster vault-demo -o jsonpath='{.status.active}'); its unseal keys are in the Secret vault-demo-unseal-keys).
Try:  $kubectl -n $ns scale vaultcluster vault-demo --replicas=5
      $kubectl -n $ns get vaultcluster vault-demo -w
      $kubectl -n vault-operator logs deploy/vault-operator -f
Docs: docs/operators/vault.md.
MSG
  fi
  if [ "$prom" != false ]; then
    log "waiting for the Prometheus to become Available"
    "$kubectl" -n "$ns" wait prometheuses.monitoring.capstan.dev/prometheus-demo --for=condition=Available --timeout=10m >&2
    "$kubectl" -n "$ns" get prometheuses.monitoring.capstan.dev prometheus-demo -o wide
    # Available means the server runs its config; scraping is what the sample is for: wait until every active target
    # answers, the operators' ServiceMonitors and the etcd members' PodMonitor among them (asked through the API
    # server's Service proxy, so no port is opened here).
    # Scrape pools are serviceMonitor/<namespace>/<name>/<i> and podMonitor/<namespace>/<name>/<i>.
    pools=(serviceMonitor/etcd-operator/ serviceMonitor/prometheus-operator/ "podMonitor/$ns/etcd-demo/")
    if [ "$vault" != false ]; then pools+=(serviceMonitor/vault-operator/); fi
    log "waiting for prometheus-demo to scrape the operators and the etcd members (${pools[*]})"
    targets="/api/v1/namespaces/$ns/services/prometheus-prometheus-demo:9090/proxy/api/v1/targets?state=active"
    scraping=""
    for _ in $(seq 1 60); do
      if scraping="$("$kubectl" get --raw "$targets" 2>/dev/null | "$repo/node_modules/node/bin/node" -e '
        const wanted = process.argv.slice(1);
        const { data } = JSON.parse(require("fs").readFileSync(0, "utf8"));
        const of = (pool) => data.activeTargets.filter((t) => t.scrapePool.startsWith(pool));
        const missing = wanted.filter((p) => of(p).length === 0 || of(p).some((t) => t.health !== "up"));
        if (missing.length > 0) process.exit(1);
        console.log(data.activeTargets.map((t) => `${t.scrapePool} ${t.scrapeUrl} ${t.health}`).join("\n"));
      ' "${pools[@]}")"; then break; fi
      scraping="" && sleep 5
    done
    if [ -z "$scraping" ]; then
      log "prometheus-demo does not scrape every one of ${pools[*]} after 5 minutes: its targets:"
      "$kubectl" get --raw "$targets" >&2 || true
      exit 1
    fi
    printf '%s\n' "$scraping" >&2
    cat >&2 <<MSG

The Prometheus operator is running and prometheus-demo scrapes the operators and the etcd members.
Try:  $kubectl get servicemonitors,podmonitors,prometheusrules -A -o custom-columns='KIND:.kind,NS:.metadata.namespace,NAME:.metadata.name,ACCEPTED:.status.bindings[0].conditions[0].message'
      $kubectl -n $ns port-forward svc/prometheus-prometheus-demo 9090   # then http://localhost:9090/api/v1/targets
      $kubectl -n prometheus-operator logs deploy/prometheus-operator -f
Docs: docs/operators/prometheus.md.
MSG
  fi
fi
