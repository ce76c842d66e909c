{{/* The recommended labels (app.kubernetes.io/*) of every object the chart makes. */}}
{{- define "voltdb.labels" -}}
{{ include "voltdb.selector" . }}
app.kubernetes.io/version: {{ include "voltdb.tag" . | quote }}
app.kubernetes.io/component: database
app.kubernetes.io/part-of: tpcc-operator
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end }}

{{/* A pod's labels: the selector's (unchanged across upgrades), the other recommended ones but
     helm.sh/chart (a chart version bump alone does not roll the pods), then podLabels, which win
     (the operator's app.kubernetes.io/managed-by). */}}
{{- define "voltdb.podLabels" -}}
{{- $labels := include "voltdb.labels" . | fromYaml -}}
{{- $_ := unset $labels "helm.sh/chart" -}}
{{ toYaml (mergeOverwrite $labels (deepCopy (.Values.podLabels | default dict))) }}
{{- end }}

{{/* image.tag, or the chart's appVersion when empty */}}
{{- define "voltdb.tag" -}}
{{- .Values.image.tag | default .Chart.AppVersion -}}
{{- end }}

{{- define "voltdb.image" -}}
{{ printf "%s:%s" .Values.image.repository (include "voltdb.tag" .) | quote }}
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

{{/* The hosts on different nodes: preferred (soft), required (hard: N hosts need N nodes) or not
     at all, so that a node lost takes one host (one copy of a partition with kfactor 1), not a
     cluster's worth; then the values' nodeSelector and tolerations (nodes kept for the database). */}}
{{- define "voltdb.affinity" -}}
{{- if ne .Values.antiAffinity "none" }}
affinity:
  podAntiAffinity:
    {{- $term := dict "topologyKey" "kubernetes.io/hostname" "labelSelector" (dict "matchLabels" (include "voltdb.selector" . | fromYaml)) }}
    {{- if eq .Values.antiAffinity "hard" }}
    requiredDuringSchedulingIgnoredDuringExecution:
    - {{- toYaml $term | nindent 6 }}
    {{- else }}
    preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 100
      podAffinityTerm: {{- toYaml $term | nindent 8 }}
    {{- end }}
{{- end }}
{{- with .Values.nodeSelector }}
nodeSelector: {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations: {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}
