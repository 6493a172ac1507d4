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

{{/* Refuses to render an analytics installation that could not run: no Meilisearch; an unknown
analytics.asr.engine, or http without analytics.asr.url; with s3.endpoint, an endpoint that is not an
http(s) URL, no bucket or no key (analytics-service refuses to start without them); without it, more than
one replica / an autoscaler on a ReadWriteOnce objects volume. */}}
{{- define "speech.analyticsChecks" -}}
{{- if not .Values.meilisearch.url -}}
{{- fail "meilisearch.url is required while analytics.enabled (MEILI_URL): the API and the worker pods share one search index" -}}
{{- end -}}
{{- if not (has .Values.analytics.asr.engine (list "pocketsphinx" "http")) -}}
{{- fail "analytics.asr.engine must be pocketsphinx or http (SPEECH_ASR_ENGINE)" -}}
{{- end -}}
{{- if and (eq .Values.analytics.asr.engine "http") (not .Values.analytics.asr.url) -}}
{{- fail "analytics.asr.url is required when analytics.asr.engine is http (SPEECH_ASR_URL): the external engine's address" -}}
{{- end -}}
{{- if .Values.s3.endpoint -}}
{{- if not (regexMatch "^https?://" .Values.s3.endpoint) -}}
{{- fail "s3.endpoint must be an http:// or https:// URL (S3_ENDPOINT), e.g. http://minio.storage.svc:9000" -}}
{{- end -}}
{{- if not .Values.s3.bucket -}}
{{- fail "s3.bucket is required when s3.endpoint is set (S3_BUCKET)" -}}
{{- end -}}
{{- if not (or .Values.s3.existingSecret .Values.secret.existingSecret (and .Values.s3.accessKeyId .Values.s3.secretAccessKey)) -}}
{{- fail "s3.accessKeyId and s3.secretAccessKey are required when s3.endpoint is set (S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY), unless s3.existingSecret names a Secret holding them (or secret.existingSecret holds S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY)" -}}
{{- end -}}
{{- else if ne .Values.analytics.objects.persistence.accessMode "ReadWriteMany" -}}
{{- if or (gt (int .Values.analytics.replicaCount) 1) .Values.analytics.autoscaling.enabled -}}
{{- fail "analytics.replicaCount must be 1 and analytics.autoscaling.enabled false while the objects are on a volume (s3.endpoint empty) whose analytics.objects.persistence.accessMode is not ReadWriteMany" -}}
{{- end -}}
{{- if and .Values.analytics.worker.enabled (or (gt (int .Values.analytics.worker.replicaCount) 1) .Values.analytics.worker.autoscaling.enabled) -}}
{{- fail "analytics.worker.replicaCount must be 1 and analytics.worker.autoscaling.enabled false while the objects are on a volume (s3.endpoint empty) whose analytics.objects.persistence.accessMode is not ReadWriteMany" -}}
{{- end -}}
{{- if and .Values.analytics.transcriber.enabled (or (gt (int .Values.analytics.transcriber.replicaCount) 1) .Values.analytics.transcriber.autoscaling.enabled) -}}
{{- fail "analytics.transcriber.replicaCount must be 1 and analytics.transcriber.autoscaling.enabled false while the objects are on a volume (s3.endpoint empty) whose analytics.objects.persistence.accessMode is not ReadWriteMany: set s3.endpoint to scale the transcribers" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The Secret with the S3 key of the analytics pods: s3.existingSecret, or the chart's (or
secret.existingSecret). Its entries are speech.s3AccessKeyIdKey and speech.s3SecretAccessKeyKey. */}}
{{- define "speech.s3SecretName" -}}
{{- if .Values.s3.existingSecret -}}
{{- .Values.s3.existingSecret -}}
{{- else -}}
{{- include "speech.secretName" . -}}
{{- end -}}
{{- end -}}

{{- define "speech.s3AccessKeyIdKey" -}}
{{- if .Values.s3.existingSecret -}}
{{- .Values.s3.existingSecretKeys.accessKeyId -}}
{{- else -}}
S3_ACCESS_KEY_ID
{{- end -}}
{{- end -}}

{{- define "speech.s3SecretAccessKeyKey" -}}
{{- if .Values.s3.existingSecret -}}
{{- .Values.s3.existingSecretKeys.secretAccessKey -}}
{{- else -}}
S3_SECRET_ACCESS_KEY
{{- end -}}
{{- end -}}

{{/* SPEECH_AUTH_URL of analytics: analytics.authUrl, or this release's auth Service. */}}
{{- define "speech.analyticsAuthUrl" -}}
{{- if .Values.analytics.authUrl -}}
{{- .Values.analytics.authUrl -}}
{{- else if .Values.auth.enabled -}}
{{- printf "http://%s:%v" (include "speech.componentName" (dict "root" . "component" "auth")) .Values.auth.port -}}
{{- else -}}
{{- fail "analytics.authUrl is required when auth.enabled is false (where analytics fetches the token service's JWKS)" -}}
{{- end -}}
{{- end -}}

{{/* The PersistentVolumeClaim of the analytics objects: analytics.objects.persistence.existingClaim, or the chart's. */}}
{{- define "speech.analyticsObjectsClaim" -}}
{{- if .Values.analytics.objects.persistence.existingClaim -}}
{{- .Values.analytics.objects.persistence.existingClaim -}}
{{- else -}}
{{- include "speech.componentName" (dict "root" . "component" "analytics-objects") -}}
{{- end -}}
{{- end -}}

{{/* With a ReadWriteOnce objects volume (no s3.endpoint), every analytics pod (API and workers) must run
on the node it is attached to: a required pod affinity to the other analytics pods of this release. The
first pod matches its own term, so it schedules anywhere. */}}
{{- define "speech.analyticsAffinity" -}}
podAffinity:
  requiredDuringSchedulingIgnoredDuringExecution:
    - topologyKey: kubernetes.io/hostname
      labelSelector:
        matchLabels:
          app.kubernetes.io/name: {{ include "speech.name" . }}
          app.kubernetes.io/instance: {{ .Release.Name }}
        matchExpressions:
          - key: app.kubernetes.io/component
            operator: In
            values: [analytics, analytics-worker, analytics-transcriber]
{{- end -}}

{{/* SPEECH_ANALYTICS_WORKER_TOPICS of the analytics workers other than the transcribers (the worker pods,
or the API pods without analytics.worker): every topic but transcribe while the transcriber Deployment
takes that one; empty, i.e. every topic, otherwise. */}}
{{- define "speech.analyticsWorkerTopics" -}}
{{- if .Values.analytics.transcriber.enabled -}}
reindex,metadata,delete,score,rescore,callback
{{- end -}}
{{- end -}}

{{/* The callback settings, the same in every analytics pod: the API checks a callback address when a
request names it, the worker that posts checks every address it connects to. Numbers go through int64:
Helm reads YAML numbers as floats, which would print 3600000 as 3.6e+06. */}}
{{- define "speech.analyticsCallbackEnv" -}}
- name: SPEECH_CALLBACK_ALLOW_LOOPBACK
  value: {{ .Values.analytics.callbacks.allowLoopback | toString | quote }}
- name: SPEECH_CALLBACK_ALLOW_PRIVATE
  value: {{ .Values.analytics.callbacks.allowPrivate | toString | quote }}
- name: SPEECH_CALLBACK_FIRST_RETRY_MS
  value: {{ .Values.analytics.callbacks.firstRetryMs | int64 | quote }}
- name: SPEECH_ANALYTICS_CALLBACK_MAX_WAIT_MS
  value: {{ .Values.analytics.callbacks.maxWaitMs | int64 | quote }}
- name: SPEECH_ANALYTICS_CALLBACK_TIMEOUT_MS
  value: {{ .Values.analytics.callbacks.timeoutMs | int64 | quote }}
- name: SPEECH_ANALYTICS_CALLBACK_ATTEMPTS
  value: {{ .Values.analytics.callbacks.attempts | int64 | quote }}
- name: SPEECH_ANALYTICS_CALLBACK_SECRET_OVERLAP_S
  value: {{ .Values.analytics.callbacks.secretOverlapS | int64 | quote }}
{{- end -}}

{{/* The recognizer settings of the pods that take the transcribe topic. */}}
{{- define "speech.analyticsAsrEnv" -}}
- name: SPEECH_ASR_ENGINE
  value: {{ .Values.analytics.asr.engine | quote }}
{{- with .Values.analytics.asr.url }}
- name: SPEECH_ASR_URL
  value: {{ . | quote }}
{{- end }}
{{- with .Values.analytics.asr.workers }}
- name: SPEECH_ASR_WORKERS
  value: {{ . | int64 | quote }}
{{- end }}
- name: SPEECH_MAX_AUDIO_SECONDS
  value: {{ .Values.analytics.asr.maxAudioSeconds | int64 | quote }}
{{- end -}}
