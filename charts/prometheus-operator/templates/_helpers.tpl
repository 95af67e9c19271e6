{{/* Names, labels and small checks shared by the Prometheus operator chart's templates. */}}

{{/* The chart name, or nameOverride. */}}
{{- define "prometheus-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The full name of the release's objects: fullnameOverride, else <release>-<name> (just the release name when it already contains the name). */}}
{{- define "prometheus-operator.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := include "prometheus-operator.name" . }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* The name of the RBAC objects that grant the operator's permissions: prefixed by the release namespace, as a ClusterRole (or a Role in another namespace) is shared by releases of every namespace. */}}
{{- define "prometheus-operator.rbacName" -}}
{{- printf "%s-%s" .Release.Namespace (include "prometheus-operator.fullname" .) }}
{{- end }}

{{/* The leader-election Lease: named after the release, so two releases in one namespace do not share it. */}}
{{- define "prometheus-operator.leaseName" -}}
{{- printf "%s-leader" (include "prometheus-operator.fullname" . | trunc 56 | trimSuffix "-") }}
{{- end }}

{{/* chart-version, for the helm.sh/chart label. */}}
{{- define "prometheus-operator.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The labels that select the operator's pods. */}}
{{- define "prometheus-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "prometheus-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The standard labels of every object. */}}
{{- define "prometheus-operator.labels" -}}
helm.sh/chart: {{ include "prometheus-operator.chart" . }}
{{ include "prometheus-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: operator
app.kubernetes.io/part-of: capstan
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* The operator's ServiceAccount name. */}}
{{- define "prometheus-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "prometheus-operator.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name must name an existing ServiceAccount when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The values that only make sense together; fails the install with a message otherwise. */}}
{{- define "prometheus-operator.validate" -}}
{{- if and (gt (int .Values.replicas) 1) (not .Values.leaderElection.enabled) }}
{{- fail (printf "replicas is %d: more than one operator replica needs leaderElection.enabled=true" (int .Values.replicas)) }}
{{- end }}
{{- end }}
