{{- define "voltdb.labels" -}}
app.kubernetes.io/name: voltdb
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end }}

{{- define "voltdb.selector" -}}
app.kubernetes.io/name: voltdb
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* host:port of the first meshSize pods through the headless Service */}}
{{- define "voltdb.mesh" -}}
{{- $hosts := list -}}
{{- range $i := until (int (min .Values.meshSize .Values.replicas)) -}}
{{- $hosts = append $hosts (printf "%s-%d.%s-hl.%s.svc.cluster.local:%d" $.Release.Name $i $.Release.Name $.Release.Namespace (int $.Values.ports.internal)) -}}
{{- end -}}
{{- join "," $hosts -}}
{{- end }}

{{/* The pods' securityContext: podSecurityContext, confined by the runtime's default seccomp
     filter unless it names a profile (the restricted Pod Security Standard needs one). */}}
{{- define "voltdb.podSecurityContext" -}}
{{- $sc := deepCopy .Values.podSecurityContext -}}
{{- if not $sc.seccompProfile }}{{ $_ := set $sc "seccompProfile" (dict "type" "RuntimeDefault") }}{{ end -}}
{{ toYaml $sc }}
{{- end }}
