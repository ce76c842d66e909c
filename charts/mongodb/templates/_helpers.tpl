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

{{/* With persistence: one PVC per member, deleted with the StatefulSet (a benchmark's data
     does not outlive its release), kept when scaled down. */}}
{{- define "mongodb.volumeClaims" -}}
{{- if .Values.persistence.enabled }}
persistentVolumeClaimRetentionPolicy: {whenDeleted: Delete, whenScaled: Retain}
volumeClaimTemplates:
- metadata:
    name: data
    labels: {{- include "mongodb.selector" . | nindent 6 }}
  spec:
    accessModes: [ReadWriteOnce]
    {{- with .Values.persistence.storageClass }}
    storageClassName: {{ . | quote }}
    {{- end }}
    resources:
      requests: {storage: {{ .Values.persistence.size | quote }}}
{{- end }}
{{- end }}
