{{/*
The operator Deployment. Call it with a dict: "ctx" the chart's context, "env" (optional) a list of the
operator's own environment variables ({name, value}), set before the user's extraEnv:
  {{ include "capstan-operator.deployment" (dict "ctx" . "env" (list (dict "name" "X" "value" .Values.x))) }}
The pod passes the Pod Security "restricted" profile with the default security contexts; both are values, with
no fixed runAsUser (the image runs as uid 1000; OpenShift assigns its own).
*/}}
{{/*
A memory quantity ("256Mi", "1Gi", "300M", 268435456) in whole MiB; fails on a unit Kubernetes does not know.
*/}}
{{- define "capstan-operator.memoryMiB" -}}
{{- $q := . }}
{{- if not (kindIs "string" $q) }}{{ $q = int64 $q | toString }}{{ end }}
{{- $n := regexFind "^[0-9]+(\\.[0-9]+)?" $q }}
{{- $unit := trimPrefix $n $q }}
{{- $bytes := dict "" 1.0 "k" 1e3 "Ki" 1024.0 "M" 1e6 "Mi" 1048576.0 "G" 1e9 "Gi" 1073741824.0 "T" 1e12 "Ti" 1099511627776.0 }}
{{- if or (eq $n "") (not (hasKey $bytes $unit)) }}
{{- fail (printf "resources.limits.memory: %q is not a memory quantity (e.g. 256Mi)" $q) }}
{{- end }}
{{- divf (mulf (float64 $n) (get $bytes $unit)) 1048576 | floor | int }}
{{- end }}

{{/*
NODE_OPTIONS from the container's memory limit: V8's old generation may reach five eighths of it, the rest is left
for Node.js itself (its code, buffers, the 4 MiB young generation: 65-80 MiB measured, docs/performance.md). V8 then
collects before the kernel would kill the container, and grows its heap by small steps (its growth factor is lowest
for heaps under 256 MiB). Without a limit, Node sizes the heap itself.
*/}}
{{- define "capstan-operator.nodeOptions" -}}
{{- with ((.Values.resources).limits).memory }}
{{- printf "--max-old-space-size=%d" (div (mul (include "capstan-operator.memoryMiB" . | int) 5) 8) }}
{{- end }}
{{- end }}

{{- define "capstan-operator.deployment" -}}
{{- $ := .ctx }}
{{- $values := $.Values }}
{{- include "capstan-operator.validate" $ }}
{{- $metricsCerts := and $values.metrics.secure $values.metrics.certSecret }}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "capstan-operator.fullname" $ }}
  namespace: {{ $.Release.Namespace }}
  labels:
    {{- include "capstan-operator.labels" $ | nindent 4 }}
spec:
  replicas: {{ $values.replicas }}
  selector:
    matchLabels:
      {{- include "capstan-operator.selectorLabels" $ | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "capstan-operator.labels" $ | nindent 8 }}
        {{- with $values.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- with $values.podAnnotations }}
      annotations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    spec:
      serviceAccountName: {{ include "capstan-operator.serviceAccountName" $ }}
      {{- with ($values.priorityClassName | default ($values.global).priorityClassName) }}
      priorityClassName: {{ . | quote }}
      {{- end }}
      {{- with (concat (($values.global).imagePullSecrets | default list) ($values.imagePullSecrets | default list)) }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      # Longer than the operator's own shutdown (30 s for in-flight reconciles, then 5 s for aborted ones to
      # return), so a rollout or drain never kills it mid-step and the Lease is released before SIGKILL.
      terminationGracePeriodSeconds: {{ $values.terminationGracePeriodSeconds }}
      {{- with $values.podSecurityContext }}
      securityContext:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      containers:
        - name: operator
          image: {{ include "capstan-operator.image" $ | quote }}
          imagePullPolicy: {{ $values.image.pullPolicy }}
          {{- with $values.extraArgs }}
          args:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          env:
            {{- with $values.watchNamespace }}
            - name: WATCH_NAMESPACE
              value: {{ . | quote }}
            {{- end }}
            - name: LEADER_ELECT
              value: {{ $values.leaderElection.enabled | quote }}
            - name: LEADER_ELECTION_NAME
              value: {{ include "capstan-operator.leaseName" $ | quote }}
            - name: POD_NAME
              valueFrom:
                fieldRef:
                  fieldPath: metadata.name
            - name: POD_NAMESPACE
              valueFrom:
                fieldRef:
                  fieldPath: metadata.namespace
            - name: POD_SELECTOR_LABELS
              value: {{ include "capstan-operator.selectorLabels" $ | fromYaml | toJson | quote }}
            - name: LOG_LEVEL
              value: {{ $values.logLevel | quote }}
            - name: MAX_CONCURRENT_RECONCILES
              value: {{ $values.maxConcurrentReconciles | quote }}
            - name: METRICS_SECURE
              value: {{ $values.metrics.secure | quote }}
            {{- if $metricsCerts }}
            - name: METRICS_CERT_DIR
              value: /etc/capstan/metrics-certs
            {{- end }}
            {{- with (include "capstan-operator.nodeOptions" $) }}
            # From resources.limits.memory (an extraEnv NODE_OPTIONS, listed after it, replaces it).
            - name: NODE_OPTIONS
              value: {{ . | quote }}
            {{- end }}
            {{- range .env }}
            - name: {{ .name }}
              value: {{ .value | quote }}
            {{- end }}
            {{- with $values.extraEnv }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          ports:
            - name: metrics
              containerPort: 8080
              protocol: TCP
            - name: health
              containerPort: 8081
              protocol: TCP
          livenessProbe:
            httpGet:
              path: /healthz
              port: health
            initialDelaySeconds: 5
            periodSeconds: 10
          readinessProbe:
            httpGet:
              path: /readyz
              port: health
            periodSeconds: 5
          {{- with $values.resources }}
          resources:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          {{- with $values.containerSecurityContext }}
          securityContext:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          {{- if or $metricsCerts $values.extraVolumeMounts }}
          volumeMounts:
            {{- if $metricsCerts }}
            - name: metrics-certs
              mountPath: /etc/capstan/metrics-certs
              readOnly: true
            {{- end }}
            {{- with $values.extraVolumeMounts }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          {{- end }}
      {{- if or $metricsCerts $values.extraVolumes }}
      volumes:
        {{- if $metricsCerts }}
        # The Secret's files change in place when it is renewed; the operator re-reads them.
        - name: metrics-certs
          secret:
            secretName: {{ $values.metrics.certSecret }}
        {{- end }}
        {{- with $values.extraVolumes }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- end }}
      {{- with $values.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $values.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $values.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $values.topologySpreadConstraints }}
      topologySpreadConstraints:
        {{- toYaml . | nindent 8 }}
      {{- end }}
{{- end }}
