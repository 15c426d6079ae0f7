{{/* Names and labels shared by every object. */}}
{{- define "ridgeline.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "ridgeline.fullname" -}}
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

{{- define "ridgeline.selectorLabels" -}}
app.kubernetes.io/name: {{ include "ridgeline.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "ridgeline.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "ridgeline.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: ridgeline
{{- end -}}

{{- define "ridgeline.serverSelector" -}}
{{ include "ridgeline.selectorLabels" . }}
app.kubernetes.io/component: server
{{- end -}}

{{- define "ridgeline.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "ridgeline.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "ridgeline.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/* Paths inside the pod. */}}
{{- define "ridgeline.builtinPluginDir" -}}/opt/ridgeline/lib/ridgeline/plugins{{- end -}}
{{- define "ridgeline.builtinProfileDir" -}}/opt/ridgeline/share/ridgeline/profiles{{- end -}}
{{- define "ridgeline.assembledDir" -}}/var/lib/ridgeline{{- end -}}
{{/* Where the assemble init container sees each vendor image volume. */}}
{{- define "ridgeline.vendorVolumeDir" -}}/opt/vendor-plugins{{- end -}}
{{- define "ridgeline.vendorVolumeName" -}}{{ printf "vendor-%s" .name | trunc 63 | trimSuffix "-" }}{{- end -}}
{{- define "ridgeline.isImageVolume" -}}{{ if eq (.source | default "initContainer") "imageVolume" }}true{{ end }}{{- end -}}

{{/* Whether plugins/profiles are assembled into an emptyDir by init containers. */}}
{{- define "ridgeline.assemblePlugins" -}}
{{- if or .Values.plugins.vendor (not .Values.plugins.builtin) -}}true{{- end -}}
{{- end -}}
{{- define "ridgeline.hasProfileConfigMap" -}}
{{- if or .Values.profiles.configMap .Values.profiles.files -}}true{{- end -}}
{{- end -}}
{{- define "ridgeline.profileConfigMapName" -}}
{{- default (printf "%s-profiles" (include "ridgeline.fullname" .)) .Values.profiles.configMap -}}
{{- end -}}
{{- define "ridgeline.assembleProfiles" -}}
{{- if and (include "ridgeline.hasProfileConfigMap" .) .Values.profiles.builtin -}}true{{- end -}}
{{- end -}}

{{/* The server's --plugin-dir / --profile-dir ("" = the image's defaults). */}}
{{- define "ridgeline.pluginDir" -}}
{{- if include "ridgeline.assemblePlugins" . -}}{{ include "ridgeline.assembledDir" . }}/plugins{{- end -}}
{{- end -}}
{{- define "ridgeline.profileDir" -}}
{{- if include "ridgeline.assembleProfiles" . -}}{{ include "ridgeline.assembledDir" . }}/profiles
{{- else if include "ridgeline.hasProfileConfigMap" . -}}/etc/ridgeline/profiles
{{- else if not .Values.profiles.builtin -}}{{ include "ridgeline.assembledDir" . }}/profiles
{{- end -}}
{{- end -}}

{{/*
Init containers that assemble the plugin and profile folders in the
"assembled" emptyDir (the server mounts it read-only). The folders are
created 0755 by uid 10001, not the emptyDir's world-writable root: the server
refuses plugin folders that others can write.
*/}}
{{- define "ridgeline.initContainers" -}}
{{- $root := include "ridgeline.assembledDir" . -}}
{{- if or (include "ridgeline.assemblePlugins" .) (include "ridgeline.assembleProfiles" .) (not .Values.profiles.builtin) }}
- name: assemble
  image: {{ include "ridgeline.image" . | quote }}
  imagePullPolicy: {{ .Values.image.pullPolicy }}
  command:
    - /bin/sh
    - -ec
    - |
      umask 022
      mkdir -p {{ $root }}/plugins {{ $root }}/profiles
      {{- if .Values.plugins.builtin }}
      cp {{ include "ridgeline.builtinPluginDir" . }}/*.so {{ $root }}/plugins/
      {{- end }}
      {{- if .Values.profiles.builtin }}
      cp {{ include "ridgeline.builtinProfileDir" . }}/*.json {{ $root }}/profiles/
      {{- end }}
      {{- if include "ridgeline.assembleProfiles" . }}
      for f in /etc/ridgeline/profiles/*.json; do cp "$f" {{ $root }}/profiles/; done
      {{- end }}
      {{- range .Values.plugins.vendor }}
      {{- if include "ridgeline.isImageVolume" . }}
      n=0
      for f in {{ include "ridgeline.vendorVolumeDir" $ }}/{{ .name }}{{ .path | default "/plugins" }}/*.so; do
        [ -e "$f" ] || continue
        cp "$f" {{ $root }}/plugins/ && n=$((n + 1))
      done
      echo "copied $n plugin(s) from the image volume of {{ .image }}"
      [ "$n" -gt 0 ]
      {{- end }}
      {{- end }}
  securityContext: {{- toYaml .Values.containerSecurityContext | nindent 4 }}
  resources:
    requests: {cpu: 50m, memory: 32Mi}
    limits: {cpu: 500m, memory: 64Mi}
  volumeMounts:
    - {name: assembled, mountPath: {{ $root }}}
    {{- if include "ridgeline.assembleProfiles" . }}
    - {name: profiles-configmap, mountPath: /etc/ridgeline/profiles, readOnly: true}
    {{- end }}
    {{- range .Values.plugins.vendor }}
    {{- if include "ridgeline.isImageVolume" . }}
    - {name: {{ include "ridgeline.vendorVolumeName" . }}, mountPath: {{ include "ridgeline.vendorVolumeDir" $ }}/{{ .name }}, readOnly: true}
    {{- end }}
    {{- end }}
{{- end }}
{{- range .Values.plugins.vendor }}
{{- if not (include "ridgeline.isImageVolume" .) }}
- name: {{ printf "plugins-%s" .name | trunc 63 | trimSuffix "-" }}
  image: {{ .image | quote }}
  imagePullPolicy: {{ .pullPolicy | default "IfNotPresent" }}
  command:
    - /bin/sh
    - -ec
    - |
      umask 022
      n=0
      for f in {{ .path | default "/plugins" }}/*.so; do
        [ -e "$f" ] || continue
        cp "$f" {{ $root }}/plugins/ && n=$((n + 1))
      done
      echo "copied $n plugin(s) from {{ .image }}"
      [ "$n" -gt 0 ]
  securityContext: {{- toYaml $.Values.containerSecurityContext | nindent 4 }}
  resources:
    requests: {cpu: 50m, memory: 32Mi}
    limits: {cpu: 500m, memory: 64Mi}
  volumeMounts:
    - {name: assembled, mountPath: {{ $root }}}
{{- end }}
{{- end }}
{{- end -}}

{{/* Volumes of the server pod. */}}
{{- define "ridgeline.volumes" -}}
- name: tmp
  emptyDir: {sizeLimit: 64Mi}
{{- if or (include "ridgeline.assemblePlugins" .) (include "ridgeline.assembleProfiles" .) (not .Values.profiles.builtin) }}
- name: assembled
  emptyDir: {sizeLimit: 512Mi}
{{- end }}
{{- if include "ridgeline.hasProfileConfigMap" . }}
- name: profiles-configmap
  configMap:
    name: {{ include "ridgeline.profileConfigMapName" . }}
{{- end }}
{{- range .Values.plugins.vendor }}
{{- if include "ridgeline.isImageVolume" . }}
{{- /* Kubernetes image volume: the kubelet pulls the vendor image and
       mounts its files read-only; no container runs from it. */}}
- name: {{ include "ridgeline.vendorVolumeName" . }}
  image:
    reference: {{ .image | quote }}
    pullPolicy: {{ .pullPolicy | default "IfNotPresent" }}
{{- end }}
{{- end }}
{{- end -}}

{{/* The HTTP port's name and appProtocol: "https" when the server serves it
     with TLS (it uses the gRPC port's files), else "http". The container
     port, both Services and the NetworkPolicy use this one name. */}}
{{- define "ridgeline.httpPortName" -}}
{{- if .Values.tls.enabled }}https{{ else }}http{{ end }}
{{- end -}}

{{/* The gRPC port's appProtocol: "grpc" in plaintext; with TLS it is HTTP/2
     over TLS, whose IANA service name is "https" (Kubernetes reserves
     unprefixed appProtocol values for IANA names), so a mesh or gateway
     passes it through as TLS instead of parsing it as cleartext gRPC. */}}
{{- define "ridgeline.grpcAppProtocol" -}}
{{- if .Values.tls.enabled }}https{{ else }}grpc{{ end }}
{{- end -}}
