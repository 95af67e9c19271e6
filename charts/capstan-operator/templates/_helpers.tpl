{{/*
Names, labels and checks shared by every Capstan operator chart. Each takes the including chart's context, so
.Chart.Name is the operator chart's name (e.g. "etcd-operator") and .Values its values.
*/}}

{{/* The chart name, or nameOverride. */}}
{{- define "capstan-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The full name of the release's objects: fullnameOverride, else <release>-<name> (just the release name when it already contains the name). */}}
{{- define "capstan-operator.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := include "capstan-operator.name" . }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* The name of the RBAC objects that grant the operator's permissions: prefixed by the release namespace, as a ClusterRole (or a Role in another namespace) is shared by releases of every namespace. */}}
{{- define "capstan-operator.rbacName" -}}
{{- printf "%s-%s" .Release.Namespace (include "capstan-operator.fullname" .) }}
{{- end }}

{{/* The leader-election Lease: named after the release, so two releases in one namespace do not share it. */}}
{{- define "capstan-operator.leaseName" -}}
{{- printf "%s-leader" (include "capstan-operator.fullname" . | trunc 56 | trimSuffix "-") }}
{{- end }}

{{/* chart-version, for the helm.sh/chart label. */}}
{{- define "capstan-operator.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The labels that select the operator's pods. */}}
{{- define "capstan-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "capstan-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The standard labels of every object, and global.commonLabels. */}}
{{- define "capstan-operator.labels" -}}
helm.sh/chart: {{ include "capstan-operator.chart" . }}
{{ include "capstan-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: operator
app.kubernetes.io/part-of: capstan
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with (.Values.global).commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* The labels of the chart's CRDs (templates/crds/, written by capstan crd): the standard ones with component crds,
and global.commonLabels. They stay on a CRD that helm uninstall keeps. (The CRDs of Helm's crds/ are not rendered:
capstan crd gives them fixed labels.) */}}
{{- define "capstan-operator.crdLabels" -}}
helm.sh/chart: {{ include "capstan-operator.chart" . }}
{{ include "capstan-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: crds
app.kubernetes.io/part-of: capstan
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with (.Values.global).commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
Whether the cluster serves prometheus-operator's <kind> API (monitoring.coreos.com/v1/<kind>): "true" or "". The one
place the charts look at the cluster's APIs. helm install and helm upgrade ask the cluster (after creating a chart's
crds/); helm template has no cluster: pass --api-versions monitoring.coreos.com/v1/<kind>.
Takes (dict "ctx" . "kind" "ServiceMonitor").
*/}}
{{- define "capstan-operator.monitoringServed" -}}
{{- if .ctx.Capabilities.APIVersions.Has (printf "monitoring.coreos.com/v1/%s" .kind) }}true{{ end }}
{{- end }}

{{/*
Whether the chart renders its <kind> (ServiceMonitor or PrometheusRule): its value (serviceMonitor.enabled,
prometheusRule.enabled) asks for it and the cluster serves the API. Rendering it where the CRD is absent would fail
the whole install ("no matches for kind"); capstan-operator.monitoringNotes says what was skipped.
Takes (dict "ctx" . "kind" "PrometheusRule"); "true" or "".
*/}}
{{- define "capstan-operator.monitoringEnabled" -}}
{{- if and (index .ctx.Values (untitle .kind)).enabled (include "capstan-operator.monitoringServed" .) }}true{{ end }}
{{- end }}

{{/* The NOTES.txt lines of every operator chart on a ServiceMonitor or PrometheusRule its value asked for but the cluster's APIs kept out. */}}
{{- define "capstan-operator.monitoringNotes" -}}
{{- range $kind := list "ServiceMonitor" "PrometheusRule" }}
{{- $value := untitle $kind }}
{{- if and (index $.Values $value).enabled (not (include "capstan-operator.monitoringServed" (dict "ctx" $ "kind" $kind))) }}

{{ $value }}.enabled is true, but no {{ $kind }} was created: the cluster has no monitoring.coreos.com/v1 {{ $kind }} API.
Install the monitoring.coreos.com CRDs (Capstan's Prometheus operator chart brings them in its crds/, unless
installed with --skip-crds; or prometheus-operator's), then run helm upgrade with the same values to create it.
With helm template, pass --api-versions monitoring.coreos.com/v1/{{ $kind }}.
{{- end }}
{{- end }}
{{- end }}

{{/* The operator's ServiceAccount name. */}}
{{- define "capstan-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "capstan-operator.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name must name an existing ServiceAccount when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
The operator image: capstan-operator.imageRef of .Values.image, its tag defaulting to the chart's appVersion.
*/}}
{{- define "capstan-operator.image" -}}
{{- include "capstan-operator.imageRef" (dict "ctx" . "value" "image" "image" .Values.image "defaultTag" .Chart.AppVersion) }}
{{- end }}

{{/*
The reference of an image a chart runs (the operator's, and any other: a sidecar's, a Job's), from its value: a map
with registry, repository, tag and digest gives [registry/]repository, then @digest when digest is set (the tag is
then ignored), else :tag (default: "defaultTag", e.g. the appVersion); global.imageRegistry, when set, replaces the
registry (a mirror that serves every image of the chart under the same repository paths). A string (the one-string
form these values had before) is taken as it is, global.imageRegistry not applied. An empty repository or string
gives "fallback" (e.g. the operator's own image), else fails naming the value.
Takes (dict "ctx" . "value" "reloaderImage" "image" .Values.reloaderImage ["defaultTag" "..."] ["fallback" "..."]).
*/}}
{{- define "capstan-operator.imageRef" -}}
{{- $image := .image }}
{{- if kindIs "string" $image }}
{{- $image | default .fallback | required (printf "%s is empty: set %s.repository and %s.tag (or .digest)" .value .value .value) }}
{{- else if not ($image | default dict).repository }}
{{- .fallback | required (printf "%s.repository is empty: it names the image" .value) }}
{{- else }}
{{- $registry := (.ctx.Values.global).imageRegistry | default $image.registry | default "" }}
{{- $repository := ternary $image.repository (printf "%s/%s" $registry $image.repository) (eq $registry "") }}
{{- if $image.digest }}
{{- printf "%s@%s" $repository $image.digest }}
{{- else }}
{{- printf "%s:%s" $repository ($image.tag | default .defaultTag | required (printf "%s.tag and %s.digest are both empty: set one" .value .value)) }}
{{- end }}
{{- end }}
{{- end }}

{{/* The values that only make sense together; fails the install with a message otherwise. */}}
{{- define "capstan-operator.validate" -}}
{{- if and (gt (int .Values.replicas) 1) (not .Values.leaderElection.enabled) }}
{{- fail (printf "replicas is %d: more than one operator replica needs leaderElection.enabled=true" (int .Values.replicas)) }}
{{- end }}
{{- end }}
