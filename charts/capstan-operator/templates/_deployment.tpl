{{/*
The operator Deployment. Call it with a dict: "ctx" the chart's context, "env" (optional) a list of the
operator's own environment variables ({name, value}), set before the user's extraEnv:
  {{ include "capstan-operator.deployment" (dict "ctx" . "env" (list (dict "name" "X" "value" .Values.x))) }}
The pod passes the Pod Security "restricted" profile with the default security contexts; both are values, with
no fixed runAsUser (the image runs as uid 1000; OpenShift assigns its own).
*/}}
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
