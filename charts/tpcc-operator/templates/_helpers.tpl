{{- define "tpcc-operator.name" -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end }}

{{/* The recommended labels (app.kubernetes.io/*) of every object the chart makes. */}}
{{- define "tpcc-operator.labels" -}}
{{ include "tpcc-operator.podLabels" . }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end }}

{{/* The operator pod's labels: the selector's (unchanged across upgrades) and the other
     recommended ones (no helm.sh/chart: a chart version bump alone does not roll the pod). */}}
{{- define "tpcc-operator.podLabels" -}}
{{ include "tpcc-operator.selector" . }}
app.kubernetes.io/version: {{ include "tpcc-operator.tag" . | quote }}
app.kubernetes.io/component: operator
app.kubernetes.io/part-of: tpcc-operator
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* image.tag, or the chart's appVersion when empty */}}
{{- define "tpcc-operator.tag" -}}
{{- .Values.image.tag | default .Chart.AppVersion -}}
{{- end }}

{{- define "tpcc-operator.selector" -}}
app.kubernetes.io/name: tpcc-operator
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "tpcc-operator.watchNamespace" -}}
{{- .Values.watchNamespace | default .Release.Namespace -}}
{{- end }}

{{- define "tpcc-operator.serviceAccount" -}}
{{- .Values.serviceAccount.name | default (include "tpcc-operator.name" .) -}}
{{- end }}
