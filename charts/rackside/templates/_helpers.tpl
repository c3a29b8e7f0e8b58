{{/* The chart name, or nameOverride. */}}
{{- define "rackside.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* release-chart, or fullnameOverride; the release name alone when it already holds the chart name. */}}
{{- define "rackside.fullname" -}}
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

{{- define "rackside.labels" -}}
app.kubernetes.io/name: {{ include "rackside.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: rackside
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "rackside.operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "rackside.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end -}}

{{- define "rackside.operator.name" -}}
{{- printf "%s-operator" (include "rackside.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "rackside.webhook.name" -}}
{{- printf "%s-webhook" (include "rackside.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "rackside.webhook.secretName" -}}
{{- if eq .Values.webhook.certificate.source "secret" -}}
{{- required "webhook.certificate.secretName is required when webhook.certificate.source is secret" .Values.webhook.certificate.secretName -}}
{{- else -}}
{{- printf "%s-tls" (include "rackside.webhook.name" .) -}}
{{- end -}}
{{- end -}}

{{/* repository@digest when a digest is given (what was published, whatever a tag later names), else repository:tag. */}}
{{- define "rackside.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/* The image of the `helm test` pods: tests.image, or the operator's own (it has node). */}}
{{- define "rackside.testImage" -}}
{{- default (include "rackside.image" .) .Values.tests.image -}}
{{- end -}}
