{{/* The chart's name, or nameOverride. */}}
{{- define "relabel.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 50 | trimSuffix "-" -}}
{{- end -}}

{{/*
The prefix of every object's name: the release name when it holds the chart's name (so a release
named relabel makes relabel, relabel-worker, relabel-api, as deploy/ does), else <release>-<name>.
At most 45 characters: the longest suffix is -worker-metrics.
*/}}
{{- define "relabel.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 45 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "relabel.name" . -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 45 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 45 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Labels every object carries besides its instance: what it is part of and who made it. */}}
{{- define "relabel.commonLabels" -}}
app.kubernetes.io/part-of: {{ include "relabel.name" . }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* Labels of every object that belongs to no one component. */}}
{{- define "relabel.labels" -}}
{{ include "relabel.commonLabels" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* Selector labels of a component ("worker" or "api"): call with (dict "root" $ "component" "worker"). */}}
{{- define "relabel.selectorLabels" -}}
app.kubernetes.io/name: {{ include "relabel.name" .root }}-{{ .component }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- end -}}

{{/* Labels of a component's objects. */}}
{{- define "relabel.componentLabels" -}}
{{ include "relabel.selectorLabels" . }}
app.kubernetes.io/component: {{ .component }}
{{ include "relabel.commonLabels" .root }}
{{- end -}}

{{- define "relabel.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "relabel.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is needed when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "relabel.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{- define "relabel.storeSecret" -}}
{{- default (include "relabel.fullname" .) .Values.store.secretName -}}
{{- end -}}

{{- define "relabel.tokensSecret" -}}
{{- default (include "relabel.fullname" .) .Values.api.tokens.secretName -}}
{{- end -}}

{{- define "relabel.temporalVariablesSecret" -}}
{{- default (printf "%s-temporal" (include "relabel.fullname" .)) .Values.temporal.variablesSecret -}}
{{- end -}}

{{/* Where the Temporal TLS Secret is mounted. */}}
{{- define "relabel.temporalTlsDir" -}}/etc/relabel/temporal-tls{{- end -}}

{{/* The pod's security context: restricted (non-root, RuntimeDefault seccomp). */}}
{{- define "relabel.podSecurityContext" -}}
runAsNonRoot: true
{{- with .Values.securityContext.runAsUser }}
runAsUser: {{ . }}
{{- end }}
{{- with .Values.securityContext.runAsGroup }}
runAsGroup: {{ . }}
{{- end }}
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* The container's security context: no privilege escalation, read-only root, no capabilities. */}}
{{- define "relabel.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: ["ALL"]
{{- end -}}

{{/* The pod annotations both Deployments share: the scrape annotations and the configuration's checksum. */}}
{{- define "relabel.podAnnotations" -}}
{{- if .root.Values.metrics.podAnnotations }}
prometheus.io/scrape: "true"
prometheus.io/port: {{ .port | quote }}
prometheus.io/path: /metrics
{{- end }}
{{/* A changed ConfigMap rolls the pods: they read it as variables only at start. */}}
checksum/config: {{ include (print .root.Template.BasePath "/configmap.yaml") .root | sha256sum }}
{{- with .annotations }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* envFrom of both containers: the ConfigMap, then the optional Secret of TEMPORAL_* variables. */}}
{{- define "relabel.envFrom" -}}
- configMapRef:
    name: {{ include "relabel.fullname" . }}
- secretRef:
    name: {{ include "relabel.temporalVariablesSecret" . }}
    optional: true
{{- end -}}

{{/* Variables both containers get from Secrets: the store URL and the Temporal API key. */}}
{{- define "relabel.secretEnv" -}}
- name: RELABEL_STORE_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "relabel.storeSecret" . }}
      key: {{ .Values.store.key }}
{{- with .Values.temporal.apiKey.secretName }}
- name: TEMPORAL_API_KEY
  valueFrom:
    secretKeyRef:
      name: {{ . }}
      key: {{ $.Values.temporal.apiKey.key }}
{{- end }}
{{- end -}}

{{/* The Temporal TLS volume and its mount, when there is a Secret. */}}
{{- define "relabel.temporalTlsVolume" -}}
{{- if and .Values.temporal.tls.enabled .Values.temporal.tls.secretName }}
- name: temporal-tls
  secret:
    secretName: {{ .Values.temporal.tls.secretName }}
{{- end }}
{{- end -}}
{{- define "relabel.temporalTlsMount" -}}
{{- if and .Values.temporal.tls.enabled .Values.temporal.tls.secretName }}
- name: temporal-tls
  mountPath: {{ include "relabel.temporalTlsDir" . }}
  readOnly: true
{{- end }}
{{- end -}}

{{/* Scheduling fields of a component's pod spec: call with its values. */}}
{{- define "relabel.scheduling" -}}
{{- with .nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .topologySpreadConstraints }}
topologySpreadConstraints:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- end -}}

{{/* The selector alerts use for the worker's series: the job the ServiceMonitor gives them. */}}
{{- define "relabel.workerJob" -}}
job="{{ include "relabel.fullname" . }}-worker-metrics"
{{- end -}}
