{{- define "tpcc-operator.name" -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end }}

{{- define "tpcc-operator.labels" -}}
app.kubernetes.io/name: tpcc-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
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
