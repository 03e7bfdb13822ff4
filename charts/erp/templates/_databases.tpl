{{/*
Where each service's database lives. Every service connects to the default endpoint (postgres.*,
reached through networkPolicy.egress.postgres) unless services.<name>.database names an entry of
postgres.endpoints: a Postgres server (or its pgbouncer) of its own, with its own connection budget
and egress rule. The URL itself stays in the service's Secret; these values only say what the
server accepts and how to reach it.
*/}}

{{/*
The endpoint name of a service's database: its services.<name>.database, else "default".
Call with (dict "root" $ "name" $serviceName "svc" $svc).
*/}}
{{- define "erp.databaseEndpointName" -}}
{{- $endpoint := .svc.database | default "default" }}
{{- if and (ne $endpoint "default") (not (hasKey (.root.Values.postgres.endpoints | default dict) $endpoint)) }}
{{- fail (printf "services.%s.database: %q is not an entry of postgres.endpoints" .name $endpoint) }}
{{- end }}
{{- $endpoint }}
{{- end }}

{{/*
An endpoint's values as YAML: label (its place in the values, for messages), maxConnections,
pooler, serverConnections and egress (a networkPolicy.egress-style rule); auditorSecret for the
others than the default one. Call with (dict "root" $ "endpoint" $name).
*/}}
{{- define "erp.databaseEndpoint" -}}
{{- if eq .endpoint "default" }}
{{- $pg := .root.Values.postgres }}
{{- toYaml (dict "label" "postgres" "maxConnections" $pg.maxConnections "pooler" $pg.pooler "serverConnections" $pg.serverConnections "egress" .root.Values.networkPolicy.egress.postgres) }}
{{- else }}
{{- toYaml (merge (dict "label" (printf "postgres.endpoints.%s" .endpoint)) (index .root.Values.postgres.endpoints .endpoint)) }}
{{- end }}
{{- end }}

{{/*
The services on each endpoint, as YAML: endpoint name → sorted list of service names. Only
endpoints with at least one service appear ("default" while any service stays there).
*/}}
{{- define "erp.databaseMembers" -}}
{{- $root := . }}
{{- $members := dict }}
{{- range $name, $values := .Values.services }}
{{- $svc := include "erp.serviceValues" (dict "root" $root "values" $values) | fromYaml }}
{{- $endpoint := include "erp.databaseEndpointName" (dict "root" $root "name" $name "svc" $svc) }}
{{- $_ := set $members $endpoint (append (get $members $endpoint | default list) $name | sortAlpha) }}
{{- end }}
{{- toYaml $members }}
{{- end }}

{{/*
Refuses to render when an endpoint could be asked for more connections than it takes: the
services on it at their maximum replicas (replicas × DB_POOL_MAX) against its maxConnections
(pgbouncer's max_client_conn, or Postgres' max_connections minus what is reserved), and, through
a transaction pooler, its database users × pooler.poolSize against its serverConnections (what
Postgres behind it takes). Each endpoint counts only its own services.
*/}}
{{- define "erp.checkDatabaseBudgets" -}}
{{- $root := . }}
{{- $clients := dict }}
{{- $users := dict }}
{{- range $name, $values := .Values.services }}
{{- $svc := include "erp.serviceValues" (dict "root" $root "values" $values) | fromYaml }}
{{- $endpoint := include "erp.databaseEndpointName" (dict "root" $root "name" $name "svc" $svc) }}
{{- $pods := ternary $svc.maxReplicas $svc.replicas $root.Values.autoscaling.enabled }}
{{- $pool := (get ($svc.env | default dict) "DB_POOL_MAX") | default $root.Values.config.DB_POOL_MAX | default 10 }}
{{- $_ := set $clients $endpoint (add (get $clients $endpoint | default 0) (mul $pods $pool)) }}
{{- /* A transaction pooler keeps a pool of server connections per database user: Postgres sees users × poolSize. */}}
{{- $secret := include "erp.databaseSecret" (dict "root" $root "name" $name "svc" $svc "job" false) | fromYaml }}
{{- $onEndpoint := get $users $endpoint | default dict }}
{{- $_ := set $onEndpoint (printf "%s/%s" $secret.name $secret.key) true }}
{{- $_ := set $users $endpoint $onEndpoint }}
{{- end }}
{{- $members := include "erp.databaseMembers" $root | fromYaml }}
{{- range $endpoint, $connections := $clients }}
{{- $e := include "erp.databaseEndpoint" (dict "root" $root "endpoint" $endpoint) | fromYaml }}
{{- $services := get $members $endpoint | join ", " }}
{{- if gt (int $connections) (int $e.maxConnections) }}
{{- fail (printf "the services of %s (%s) could open %d database connections at their maximum replicas (replicas × DB_POOL_MAX), over %s.maxConnections (%d): lower them, or put a pooler in front and raise it" $e.label $services (int $connections) $e.label (int $e.maxConnections)) }}
{{- end }}
{{- if $e.pooler.enabled }}
{{- $userCount := len (get $users $endpoint) }}
{{- $server := mul $userCount $e.pooler.poolSize }}
{{- if not $e.serverConnections }}
{{- fail (printf "%s.serverConnections is needed with its pooler: the connections its Postgres takes" $e.label) }}
{{- end }}
{{- if gt (int $server) (int $e.serverConnections) }}
{{- fail (printf "the pooler of %s could open %d server connections (%d database users × %s.pooler.poolSize %d), over %s.serverConnections (%d): lower the pool size per user, or raise Postgres' max_connections and serverConnections" $e.label (int $server) $userCount $e.label (int $e.pooler.poolSize) $e.label (int $e.serverConnections)) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
