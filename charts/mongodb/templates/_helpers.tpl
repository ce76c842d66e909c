{{/* The recommended labels (app.kubernetes.io/*) of every object the chart makes; component
     "database" (the objects every member shares). */}}
{{- define "mongodb.labels" -}}
{{ include "mongodb.labelsOf" (dict "root" . "component" "") }}
{{- end }}

{{/* The same for one workload's objects: a sharded topology's configsvr, shard<i> or mongos.
     dict: root, component ("" for database) */}}
{{- define "mongodb.labelsOf" -}}
{{ include "mongodb.selector" .root }}
app.kubernetes.io/version: {{ include "mongodb.tag" .root | quote }}
app.kubernetes.io/component: {{ .component | default "database" }}
app.kubernetes.io/part-of: tpcc-operator
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ .root.Chart.Name }}-{{ .root.Chart.Version }}
{{- end }}

{{/* A workload's pod labels: its selector's (unchanged across upgrades), the other recommended
     ones but helm.sh/chart (a chart version bump alone does not roll the pods), then podLabels,
     which win (the operator's app.kubernetes.io/managed-by). dict: root, component */}}
{{- define "mongodb.podLabels" -}}
{{- $labels := include "mongodb.labelsOf" . | fromYaml -}}
{{- $_ := unset $labels "helm.sh/chart" -}}
{{ toYaml (mergeOverwrite $labels (deepCopy (.root.Values.podLabels | default dict))) }}
{{- end }}

{{/* image.tag, or the chart's appVersion when empty */}}
{{- define "mongodb.tag" -}}
{{- .Values.image.tag | default .Chart.AppVersion -}}
{{- end }}

{{- define "mongodb.selector" -}}
app.kubernetes.io/name: mongodb
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The pods of one workload: a replica set's StatefulSet or the mongos StatefulSet.
     dict: root, component ("" for the replicaset topology's only set) */}}
{{- define "mongodb.workloadSelector" -}}
{{ include "mongodb.selector" .root }}
{{- with .component }}
app.kubernetes.io/component: {{ . }}
{{- end }}
{{- end }}

{{- define "mongodb.keyfileSecret" -}}
{{- .Values.auth.keyfileSecret | default (printf "%s-keyfile" .Release.Name) -}}
{{- end }}

{{- define "mongodb.image" -}}
{{ printf "%s:%s" .Values.image.repository (include "mongodb.tag" .) | quote }}
{{- end }}

{{/* The replica sets the release runs, as YAML {sets: [...]}: one (StatefulSet <release>,
     set replicaSetName) for topology replicaset; for sharded the config-server set
     <release>-cfg and one set <release>-shard<i> per shard, of `replicas` members each. */}}
{{- define "mongodb.sets" -}}
sets:
{{- if eq .Values.topology "sharded" }}
- {name: {{ printf "%s-cfg" .Release.Name }}, component: configsvr, setName: cfg, replicas: {{ int .Values.sharded.configServers }}, role: --configsvr, script: init-cfg.js}
{{- range $i := until (int .Values.sharded.shards) }}
- {name: {{ printf "%s-shard%d" $.Release.Name $i }}, component: {{ printf "shard%d" $i }}, setName: {{ printf "shard%d" $i }}, replicas: {{ int $.Values.replicas }}, role: --shardsvr, script: {{ printf "init-shard%d.js" $i }}}
{{- end }}
{{- else }}
- {name: {{ .Release.Name }}, component: "", setName: {{ .Values.replicaSetName | quote }}, replicas: {{ int .Values.replicas }}, role: "", script: init-replica-set.js}
{{- end }}
{{- end }}

{{/* host:port of every member of a set through the headless Service. dict: root, set */}}
{{- define "mongodb.hosts" -}}
{{- $h := list -}}
{{- range $i := until (int .set.replicas) -}}
{{- $h = append $h (printf "%s-%d.%s-hl.%s.svc.cluster.local:%d" $.set.name $i $.root.Release.Name $.root.Release.Namespace (int $.root.Values.port)) -}}
{{- end -}}
{{ join "," $h }}
{{- end }}

{{/* rs.initiate() members: every pod's DNS name through the headless Service. dict: root, set */}}
{{- define "mongodb.members" -}}
{{- $m := list -}}
{{- range $i, $host := splitList "," (include "mongodb.hosts" .) -}}
{{- $m = append $m (printf "{_id: %d, host: '%s'}" $i $host) -}}
{{- end -}}
[{{ join ", " $m }}]
{{- end }}

{{/* Members of one set on different nodes: preferred (soft) or required (hard); then the values'
     nodeSelector and tolerations (nodes kept for the database). dict: root, component */}}
{{- define "mongodb.affinity" -}}
{{- if ne .root.Values.antiAffinity "none" }}
affinity:
  podAntiAffinity:
    {{- $term := dict "topologyKey" "kubernetes.io/hostname" "labelSelector" (dict "matchLabels" (include "mongodb.workloadSelector" . | fromYaml)) }}
    {{- if eq .root.Values.antiAffinity "hard" }}
    requiredDuringSchedulingIgnoredDuringExecution:
    - {{- toYaml $term | nindent 6 }}
    {{- else }}
    preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 100
      podAffinityTerm: {{- toYaml $term | nindent 8 }}
    {{- end }}
{{- end }}
{{- with .root.Values.nodeSelector }}
nodeSelector: {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .root.Values.tolerations }}
tolerations: {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* With persistence: one PVC per member, deleted with the StatefulSet (a benchmark's data
     does not outlive its release), kept when scaled down. dict: root, component */}}
{{- define "mongodb.volumeClaims" -}}
{{- if .root.Values.persistence.enabled }}
persistentVolumeClaimRetentionPolicy: {whenDeleted: Delete, whenScaled: Retain}
volumeClaimTemplates:
- metadata:
    name: data
    labels: {{- include "mongodb.workloadSelector" . | nindent 6 }}
  spec:
    accessModes: [ReadWriteOnce]
    {{- with .root.Values.persistence.storageClass }}
    storageClassName: {{ . | quote }}
    {{- end }}
    resources:
      requests: {storage: {{ .root.Values.persistence.size | quote }}}
{{- end }}
{{- end }}

{{/* The keyfile init container and volumes (auth only): mongod and mongos refuse a keyfile
     readable by others, so it is copied with mode 0400, owned by the pod's user. */}}
{{- define "mongodb.keyfileInit" -}}
- name: keyfile
  image: {{ include "mongodb.image" . }}
  imagePullPolicy: {{ .Values.image.pullPolicy | quote }}
  command: ["sh", "-c", "cp /keyfile-secret/keyfile /keyfile/keyfile && chmod 0400 /keyfile/keyfile"]
  resources:
    requests: {cpu: 10m, memory: 16Mi}
    limits: {cpu: 100m, memory: 64Mi}
  securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
  volumeMounts:
  - {name: keyfile-secret, mountPath: /keyfile-secret, readOnly: true}
  - {name: keyfile, mountPath: /keyfile}
{{- end }}

{{- define "mongodb.keyfileVolumes" -}}
- name: keyfile
  emptyDir: {medium: Memory}
# 0440: the Secret's files belong to root and the pod's fsGroup, so the group bit lets the
# init container (non-root) read it; what mongod reads is the 0400 copy
- name: keyfile-secret
  secret: {secretName: {{ include "mongodb.keyfileSecret" . | quote }}, defaultMode: 0440}
{{- end }}

{{- define "mongodb.rootUserEnv" -}}
- name: MONGO_ROOT_USERNAME
  valueFrom: {secretKeyRef: {name: {{ .Values.auth.existingSecret | quote }}, key: {{ .Values.auth.usernameKey | quote }}}}
- name: MONGO_ROOT_PASSWORD
  valueFrom: {secretKeyRef: {name: {{ .Values.auth.existingSecret | quote }}, key: {{ .Values.auth.passwordKey | quote }}}}
{{- end }}

{{/* The pods' securityContext: podSecurityContext, confined by the runtime's default seccomp
     filter unless it names a profile (the restricted Pod Security Standard needs one). */}}
{{- define "mongodb.podSecurityContext" -}}
{{- $sc := deepCopy .Values.podSecurityContext -}}
{{- if not $sc.seccompProfile }}{{ $_ := set $sc "seccompProfile" (dict "type" "RuntimeDefault") }}{{ end -}}
{{ toYaml $sc }}
{{- end }}
