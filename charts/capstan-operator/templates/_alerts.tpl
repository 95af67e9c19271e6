{{/*
The alerts on the operator itself, the same for every operator: reconciles failing, leadership flapping, the
operator down. Rule items for a PrometheusRule group; call with a dict: "ctx" the chart's context, "prefix" of
the alert names (e.g. "Etcd" gives EtcdOperatorDown), "operator" as the text says it (e.g. "etcd operator"),
"objects" whose conditions to check (e.g. "EtcdClusters") and "whileDown", what stops while no replica runs (e.g.
"no EtcdCluster is repaired"). Every expression selects this release's metrics Service job.
*/}}
{{- define "capstan-operator.operatorAlerts" -}}
{{- $ := .ctx }}
{{- $sel := printf "job=\"%s-metrics\", namespace=\"%s\"" (include "capstan-operator.fullname" $) $.Release.Namespace }}
{{- $alertLabels := $.Values.prometheusRule.alertLabels }}
- alert: {{ .prefix }}OperatorReconcileErrors
  expr: sum by (controller) (rate(controller_runtime_reconcile_errors_total{ {{- $sel -}} }[10m])) > 0
  for: {{ $.Values.prometheusRule.for }}
  labels:
    severity: warning
    {{- with $alertLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  annotations:
    summary: The {{ .operator }}'s reconciles keep failing
    description: >-
      Reconciles of {{ "{{ $labels.controller }}" }} failed for {{ $.Values.prometheusRule.for }}: see the
      operator's logs (kubectl -n {{ $.Release.Namespace }} logs deploy/{{ include "capstan-operator.fullname" $ }})
      and the {{ .objects }}' Degraded conditions and Events.
- alert: {{ .prefix }}OperatorLeaderElectionFlapping
  expr: sum by (name) (changes(leader_election_master_status{ {{- $sel -}} }[15m])) > 5
  for: {{ $.Values.prometheusRule.for }}
  labels:
    severity: warning
    {{- with $alertLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  annotations:
    summary: The {{ .operator }}'s leadership keeps changing hands
    description: >-
      The replicas' leadership of the Lease {{ "{{ $labels.name }}" }} changed {{ "{{ $value }}" }} times in 15
      minutes (a rolling update makes at most 4): replicas restarting (kubectl -n {{ $.Release.Namespace }} get pods; look for OOMKilled and failing probes) or
      an API server too slow to renew the Lease in time (the operator logs "leader election lost").
- alert: {{ .prefix }}OperatorDown
  expr: up{ {{- $sel -}} } == 0
  for: {{ $.Values.prometheusRule.for }}
  labels:
    severity: critical
    {{- with $alertLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  annotations:
    summary: The {{ .operator }} at {{ "{{ $labels.instance }}" }} cannot be scraped
    description: >-
      Prometheus cannot scrape the operator pod {{ "{{ $labels.pod }}" }}: it is down, not ready, or refuses
      the scrape (with metrics.secure, Prometheus' ServiceAccount needs the metrics-reader ClusterRole). While
      no replica runs, {{ .whileDown }}. Check kubectl -n {{ $.Release.Namespace }} get pods,
      describe pod and logs.
{{- end }}
