{{/*
The objects every operator chart has besides its Deployment, RBAC and alerts. Each template takes the chart's
context: {{ include "capstan-operator.service" . }}.
*/}}
{{/* The metrics Service: port 8080 (metrics) of the operator's pods. */}}
{{- define "capstan-operator.service" -}}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "capstan-operator.fullname" . }}-metrics
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "capstan-operator.labels" . | nindent 4 }}
spec:
  type: ClusterIP
  selector:
    {{- include "capstan-operator.selectorLabels" . | nindent 4 }}
  ports:
    - name: metrics
      port: 8080
      targetPort: metrics
      protocol: TCP
{{- end }}

{{/* The operator's ServiceAccount (serviceAccount.create), with serviceAccount.annotations. */}}
{{- define "capstan-operator.serviceAccount" -}}
{{- if .Values.serviceAccount.create }}
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ include "capstan-operator.serviceAccountName" . }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "capstan-operator.labels" . | nindent 4 }}
  {{- with .Values.serviceAccount.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
{{- end }}

{{/* An optional PodDisruptionBudget for the operator's pods (useful with replicas > 1). */}}
{{- define "capstan-operator.podDisruptionBudget" -}}
{{- if .Values.podDisruptionBudget.enabled }}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "capstan-operator.fullname" . }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "capstan-operator.labels" . | nindent 4 }}
spec:
  {{- if hasKey .Values.podDisruptionBudget "maxUnavailable" }}
  maxUnavailable: {{ .Values.podDisruptionBudget.maxUnavailable }}
  {{- else }}
  minAvailable: {{ .Values.podDisruptionBudget.minAvailable | default 1 }}
  {{- end }}
  selector:
    matchLabels:
      {{- include "capstan-operator.selectorLabels" . | nindent 6 }}
{{- end }}
{{- end }}

{{/* Optional ServiceMonitor (monitoring.coreos.com/v1): prometheus-operator and Capstan's Prometheus operator scrape the operator's /metrics with it. Only where the cluster serves the API (capstan-operator.monitoringEnabled). */}}
{{- define "capstan-operator.serviceMonitor" -}}
{{- if include "capstan-operator.monitoringEnabled" (dict "ctx" . "kind" "ServiceMonitor") }}
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: {{ include "capstan-operator.fullname" . }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "capstan-operator.labels" . | nindent 4 }}
    {{- with .Values.serviceMonitor.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  selector:
    matchLabels:
      {{- include "capstan-operator.selectorLabels" . | nindent 6 }}
  endpoints:
    - port: metrics
      path: /metrics
      interval: {{ .Values.serviceMonitor.interval }}
      {{- if .Values.metrics.secure }}
      # The operator asks the API server whether the scraper's token may get /metrics.
      scheme: https
      {{- with .Values.serviceMonitor.bearerTokenSecret }}
      {{- if .name }}
      authorization:
        type: Bearer
        credentials:
          name: {{ .name }}
          key: {{ .key }}
      {{- else }}
      bearerTokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token
      {{- end }}
      {{- end }}
      tlsConfig:
        {{- if .Values.metrics.certSecret }}
        ca:
          secret:
            name: {{ .Values.metrics.certSecret }}
            key: ca.crt
        serverName: {{ include "capstan-operator.fullname" . }}-metrics.{{ .Release.Namespace }}.svc
        {{- else }}
        # The operator's certificate is self-signed: set metrics.certSecret to verify it.
        insecureSkipVerify: true
        {{- end }}
      {{- else }}
      scheme: http
      {{- end }}
{{- end }}
{{- end }}

{{/* Secure metrics (metrics.secure): the operator asks the API server who a scraper is (TokenReview) and whether it may get /metrics (SubjectAccessReview). Both are cluster-scoped, so even a namespace-scoped install needs this ClusterRole. Scrapers get the metrics-reader ClusterRole, bound to their own ServiceAccount. */}}
{{- define "capstan-operator.metricsRbac" -}}
{{- if and .Values.rbac.create .Values.metrics.secure }}
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ include "capstan-operator.rbacName" . }}-metrics-auth
  labels:
    {{- include "capstan-operator.labels" . | nindent 4 }}
rules:
  - apiGroups: [authentication.k8s.io]
    resources: [tokenreviews]
    verbs: [create]
  - apiGroups: [authorization.k8s.io]
    resources: [subjectaccessreviews]
    verbs: [create]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{ include "capstan-operator.rbacName" . }}-metrics-auth
  labels:
    {{- include "capstan-operator.labels" . | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ include "capstan-operator.rbacName" . }}-metrics-auth
subjects:
  - kind: ServiceAccount
    name: {{ include "capstan-operator.serviceAccountName" . }}
    namespace: {{ .Release.Namespace }}
---
# Bind this to a scraper's ServiceAccount (e.g. Prometheus') so it may read the operator's /metrics:
#   kubectl create clusterrolebinding <name> --clusterrole=<this role> --serviceaccount=<namespace>:<name>
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ include "capstan-operator.rbacName" . }}-metrics-reader
  labels:
    {{- include "capstan-operator.labels" . | nindent 4 }}
rules:
  - nonResourceURLs: [/metrics]
    verbs: [get]
{{- end }}
{{- end }}

{{/* Optional Grafana dashboard (dashboards/<chart>.json) in a ConfigMap labelled grafana_dashboard: "1", the label Grafana's dashboard sidecar (kiwigrid k8s-sidecar, as in the grafana chart's sidecar.dashboards) watches by default. The JSON selects its data source with a ${datasource} variable, so it works with any Prometheus data source. */}}
{{- define "capstan-operator.dashboard" -}}
{{- if .Values.dashboard.enabled }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "capstan-operator.fullname" . }}-dashboard
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "capstan-operator.labels" . | nindent 4 }}
    grafana_dashboard: "1"
    {{- with .Values.dashboard.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- with .Values.dashboard.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
data:
  {{ .Chart.Name }}.json: |-
{{ .Files.Get (printf "dashboards/%s.json" .Chart.Name) | trim | indent 4 }}
{{- end }}
{{- end }}
