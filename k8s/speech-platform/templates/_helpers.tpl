{{/* Chart name, truncated to the 63 characters of a DNS label. */}}
{{- define "speech.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Release-qualified name: <release>-<chart>, or the release name when it already contains the chart's. */}}
{{- define "speech.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Name of one service's objects. Call with (dict "root" $ "component" "auth"). */}}
{{- define "speech.componentName" -}}
{{- printf "%s-%s" (include "speech.fullname" .root) .component | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "speech.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels of every object. */}}
{{- define "speech.labels" -}}
helm.sh/chart: {{ include "speech.chart" . }}
app.kubernetes.io/name: {{ include "speech.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: speech-platform
{{- end -}}

{{/* Selector labels of one service. Call with (dict "root" $ "component" "auth"). */}}
{{- define "speech.selectorLabels" -}}
app.kubernetes.io/name: {{ include "speech.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* All labels of one service's objects. Call with (dict "root" $ "component" "auth"). */}}
{{- define "speech.componentLabels" -}}
{{ include "speech.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* The Secret with DATABASE_URL and SPEECH_SECRET_KEY: the existing one, or the chart's. */}}
{{- define "speech.secretName" -}}
{{- if .Values.secret.existingSecret -}}
{{- .Values.secret.existingSecret -}}
{{- else -}}
{{- include "speech.fullname" . -}}
{{- end -}}
{{- end -}}

{{/* The ConfigMap with the non-secret settings shared by all services. */}}
{{- define "speech.configMapName" -}}
{{- printf "%s-config" (include "speech.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* repository:tag of one image. Call with (dict "root" $ "image" .Values.auth.image). */}}
{{- define "speech.image" -}}
{{- printf "%s:%s" .image.repository (default .root.Chart.AppVersion .image.tag) -}}
{{- end -}}

{{/* Pod annotations: Prometheus scraping of /metrics, and checksums that roll the pods when settings change. */}}
{{- define "speech.podAnnotations" -}}
prometheus.io/scrape: "true"
prometheus.io/path: /metrics
prometheus.io/port: {{ .port | quote }}
checksum/config: {{ include (print .root.Template.BasePath "/configmap.yaml") .root | sha256sum }}
checksum/secret: {{ include (print .root.Template.BasePath "/secret.yaml") .root | sha256sum }}
{{- end -}}
