{{/* Chart name, or nameOverride. */}}
{{- define "erp.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Prefix of every object name: the release name, with the chart name unless it already has it. */}}
{{- define "erp.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Name of a service's objects. Call with (dict "root" $ "name" $serviceName). */}}
{{- define "erp.serviceFullname" -}}
{{- printf "%s-%s" (include "erp.fullname" .root) .name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels on every object. */}}
{{- define "erp.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/part-of: {{ include "erp.name" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/*
Selector of one service's pods of one component (server, migration).
Call with (dict "root" $ "name" $serviceName "component" "server").
*/}}
{{- define "erp.selectorLabels" -}}
app.kubernetes.io/name: {{ .name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* A service's values: each key it sets, else the one from serviceDefaults. Returns YAML. */}}
{{- define "erp.serviceValues" -}}
{{- $svc := deepCopy .root.Values.serviceDefaults }}
{{- range $key, $value := .values }}
{{- $_ := set $svc $key $value }}
{{- end }}
{{- toYaml $svc }}
{{- end }}

{{/* Image reference of a service. Call with (dict "root" $ "name" $serviceName "svc" $svc). */}}
{{- define "erp.image" -}}
{{- $reference := .svc.image }}
{{- if not $reference }}
{{- $image := .root.Values.image }}
{{- $repository := printf "%s-%s" $image.repository .name }}
{{- if $image.registry }}
{{- $repository = printf "%s/%s" (trimSuffix "/" $image.registry) $repository }}
{{- end }}
{{- $reference = printf "%s:%s" $repository (default .root.Chart.AppVersion $image.tag) }}
{{- end }}
{{- /* A digest pins the content: the tag stays for people, the runtime pulls by digest. */}}
{{- if and .svc.digest (not (contains "@" $reference)) }}
{{- $reference = printf "%s@%s" $reference .svc.digest }}
{{- end }}
{{- if and .root.Values.image.requireDigest (not (regexMatch "@sha256:[a-f0-9]{64}$" $reference)) }}
{{- fail (printf "services.%s: the image %s is not pinned by a digest: set services.%s.digest=sha256:… (what the registry answered the push with), or image.requireDigest=false for images built on this machine (deploy/values-dev.yaml)" .name $reference .name) }}
{{- end }}
{{- $reference }}
{{- end }}

{{/*
Fails unless the services reach NATS over TLS (existingSecrets.nats.tlsSecret) or the values say
plaintext is meant: the bus carries every service's password and every event.
*/}}
{{- define "erp.checkNatsTls" -}}
{{- with .Values.existingSecrets.nats }}
{{- if and (not .tlsSecret) (not .allowPlaintext) }}
{{- fail "existingSecrets.nats.tlsSecret is empty: name the Secret with the CA of the NATS servers (ca.crt; with clientCertificate, tls.crt and tls.key), or set existingSecrets.nats.allowPlaintext=true for a NATS without TLS (a development cluster, deploy/values-dev.yaml)" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
An environment value as a string. Helm reads YAML numbers as floats, which would print 25000000
as 2.5e+07: whole numbers are printed as integers.
*/}}
{{- define "erp.envValue" -}}
{{- if and (kindIs "float64" .) (eq (float64 (int64 .)) .) }}
{{- int64 . | toString }}
{{- else }}
{{- toString . }}
{{- end }}
{{- end }}

{{/* SHUTDOWN_TIMEOUT_MS of a service (its own env, else the shared config), in whole seconds, rounded up. */}}
{{- define "erp.shutdownSeconds" -}}
{{- $ms := .root.Values.config.SHUTDOWN_TIMEOUT_MS | default 25000 }}
{{- if hasKey (.svc.env | default dict) "SHUTDOWN_TIMEOUT_MS" }}
{{- $ms = get .svc.env "SHUTDOWN_TIMEOUT_MS" }}
{{- end }}
{{- div (add (int64 $ms) 999) 1000 }}
{{- end }}

{{/*
Environment of a service's containers beside the shared ConfigMap: identity for traces, ports,
secrets from existing Secrets, then the service's own env.
Call with (dict "root" $ "name" $serviceName "svc" $svc "job" bool). For the migration Job
("job" true) the shared config is inlined, as hook Jobs run before the release's ConfigMap
exists, and what only a running server needs (ports, Redis) is left out.
*/}}
{{- define "erp.env" -}}
{{- $root := .root }}
{{- if .job }}
{{- range $key, $value := $root.Values.config }}
{{- if not (hasKey ($.svc.env | default dict) $key) }}
- name: {{ $key }}
  value: {{ include "erp.envValue" $value | quote }}
{{- end }}
{{- end }}
{{- end }}
- name: POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: POD_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
- name: OTEL_SERVICE_NAME
  value: {{ .name | quote }}
- name: OTEL_RESOURCE_ATTRIBUTES
  value: {{ printf "service.namespace=%s,service.version=%s,k8s.namespace.name=$(POD_NAMESPACE),k8s.pod.name=$(POD_NAME)" (include "erp.fullname" $root) $root.Chart.AppVersion | quote }}
{{- if not .job }}
- name: OPS_PORT
  value: {{ $root.Values.opsPort | quote }}
{{- end }}
{{- if and .svc.public (not .job) }}
- name: PORT
  value: {{ .svc.httpPort | quote }}
{{- end }}
{{- $database := include "erp.databaseSecret" . | fromYaml }}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ $database.name }}
      key: {{ $database.key }}
{{- with $root.Values.postgres.readReplica }}
{{- if and .enabled (has $.name .services) (not $.job) }}
{{- $read := $.svc.readDatabaseSecret | default (dict "name" $database.name "key" "DATABASE_URL_READ") }}
- name: DATABASE_URL_READ
  valueFrom:
    secretKeyRef:
      name: {{ $read.name }}
      key: {{ $read.key }}
{{- end }}
{{- end }}
{{- with $root.Values.existingSecrets.nats }}
{{- if and .name (not $.job) }}
- name: NATS_USER
  value: {{ $.name | quote }}
- name: NATS_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ .name }}
      key: {{ printf "NATS_PASSWORD_%s" ($.name | upper | replace "-" "_") }}
{{- end }}
{{- end }}
{{- if not .job }}
{{- include "erp.natsTlsEnv" $root }}
{{- end }}
{{- if and .svc.redis (not .job) }}
- name: REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ $root.Values.existingSecrets.redis.name }}
      key: {{ $root.Values.existingSecrets.redis.key }}
{{- end }}
{{- if not .job }}
{{- range $key, $ref := .svc.secretEnv }}
- name: {{ $key }}
  valueFrom:
    secretKeyRef:
      name: {{ $ref.name }}
      key: {{ $ref.key }}
      optional: {{ $ref.optional | default false }}
{{- end }}
{{- end }}
{{- range $key, $value := .svc.env }}
- name: {{ $key }}
  value: {{ include "erp.envValue" $value | quote }}
{{- end }}
{{- end }}

{{/*
The Secret (name and key) of a service's DATABASE_URL, or of its migration Job's ("job" true): the
service's own databaseSecret / migrationDatabaseSecret, else its per-service Secret (its runtime
role, its owner role), else, when per-service Secrets are turned off, the shared one. Returns YAML.
Call with (dict "root" $ "name" $serviceName "svc" $svc "job" bool).
*/}}
{{- define "erp.databaseSecret" -}}
{{- $secrets := .root.Values.existingSecrets }}
{{- $own := ternary .svc.migrationDatabaseSecret .svc.databaseSecret (eq .job true) }}
{{- if $own }}
{{- toYaml $own }}
{{- else if $secrets.databasePerService.enabled }}
name: {{ printf "%s-%s" $secrets.databasePerService.prefix (ternary (trimSuffix "-migrate" .name) .name (eq .job true)) }}
key: {{ ternary "MIGRATION_DATABASE_URL" "DATABASE_URL" (eq .job true) }}
{{- else }}
{{- toYaml (ternary $secrets.migrationDatabase $secrets.database (eq .job true)) }}
{{- end }}
{{- end }}

{{/*
TLS to NATS when existingSecrets.nats.tlsSecret names a Secret: its environment, its volume
mount and its volume. Call with $ (the root).
*/}}
{{- define "erp.natsTlsEnv" -}}
{{- with .Values.existingSecrets.nats }}
{{- if .tlsSecret }}
- name: NATS_TLS_CA_FILE
  value: /etc/erp/nats-tls/ca.crt
{{- if .clientCertificate }}
- name: NATS_TLS_CERT_FILE
  value: /etc/erp/nats-tls/tls.crt
- name: NATS_TLS_KEY_FILE
  value: /etc/erp/nats-tls/tls.key
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{- define "erp.natsTlsMount" -}}
{{- if .Values.existingSecrets.nats.tlsSecret }}
- name: nats-tls
  mountPath: /etc/erp/nats-tls
  readOnly: true
{{- end }}
{{- end }}

{{- define "erp.natsTlsVolume" -}}
{{- with .Values.existingSecrets.nats.tlsSecret }}
- name: nats-tls
  secret:
    secretName: {{ . }}
    defaultMode: 0440
{{- end }}
{{- end }}

{{/* Restricted pod security (Pod Security Standards "restricted"). */}}
{{- define "erp.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 1000
runAsGroup: 1000
fsGroup: 1000
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{- define "erp.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
capabilities:
  drop: ["ALL"]
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{/* One egress rule from networkPolicy.egress.<name>; an empty `to` means any destination. */}}
{{- define "erp.egressRule" -}}
- ports:
    {{- toYaml .ports | nindent 4 }}
  {{- with .to }}
  to:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
