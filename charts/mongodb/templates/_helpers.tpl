{{- define "mongodb.labels" -}}
app.kubernetes.io/name: mongodb
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end }}

{{- define "mongodb.selector" -}}
app.kubernetes.io/name: mongodb
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "mongodb.keyfileSecret" -}}
{{- .Values.auth.keyfileSecret | default (printf "%s-keyfile" .Release.Name) -}}
{{- end }}

{{/* rs.initiate() members: every pod's DNS name through the headless Service */}}
{{- define "mongodb.members" -}}
{{- $m := list -}}
{{- range $i := until (int .Values.replicas) -}}
{{- $m = append $m (printf "{_id: %d, host: '%s-%d.%s-hl.%s.svc.cluster.local:%d'}" $i $.Release.Name $i $.Release.Name $.Release.Namespace (int $.Values.port)) -}}
{{- end -}}
[{{ join ", " $m }}]
{{- end }}
