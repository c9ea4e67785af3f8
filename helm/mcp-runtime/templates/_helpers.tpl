{{/* Names, labels and the rendered runtime configuration. */}}

{{- define "mcp-runtime.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "mcp-runtime.fullname" -}}
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

{{- define "mcp-runtime.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "mcp-runtime.selectorLabels" -}}
app.kubernetes.io/name: {{ include "mcp-runtime.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "mcp-runtime.labels" -}}
helm.sh/chart: {{ include "mcp-runtime.chart" . }}
{{ include "mcp-runtime.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: mcp-runtime
{{- end }}

{{/* The `helm test` pod: same release, but never matched by the replicas' selector. */}}
{{- define "mcp-runtime.testLabels" -}}
helm.sh/chart: {{ include "mcp-runtime.chart" . }}
app.kubernetes.io/name: {{ include "mcp-runtime.name" . }}-test
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: helm-test
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "mcp-runtime.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "mcp-runtime.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "mcp-runtime.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* The Secret holding the key ring: the user's, or the chart-managed one. */}}
{{- define "mcp-runtime.keyRingSecret" -}}
{{- if .Values.requestState.keyRing.existingSecret }}
{{- .Values.requestState.keyRing.existingSecret }}
{{- else if .Values.requestState.keyRing.generate }}
{{- printf "%s-request-state" (include "mcp-runtime.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- fail "requestState.keyRing: set existingSecret (recommended) or generate: true. Every replica must share the requestState key ring, or MRTR retries that reach another replica are refused." }}
{{- end }}
{{- end }}

{{/*
How long the runtime lets in-flight calls finish after SIGTERM: server.shutdown_grace_ms
when set, else the longest a call may run (server.call_timeout_ms, default 60 s).
*/}}
{{- define "mcp-runtime.shutdownGraceMs" -}}
{{- $server := default dict .Values.config.server }}
{{- int64 (default (default 60000 $server.call_timeout_ms) $server.shutdown_grace_ms) }}
{{- end }}

{{/*
Seconds the pod gets to stop: the preStop wait, then the runtime's shutdown grace
(rounded up), plus 5 s to flush telemetry and exit.
*/}}
{{- define "mcp-runtime.terminationGracePeriodSeconds" -}}
{{- if kindIs "invalid" .Values.terminationGracePeriodSeconds }}
{{- $graceMs := int64 (include "mcp-runtime.shutdownGraceMs" .) }}
{{- add (int64 .Values.preStopSleepSeconds) (div (add $graceMs 999) 1000) 5 }}
{{- else }}
{{- .Values.terminationGracePeriodSeconds }}
{{- end }}
{{- end }}

{{/*
Copies a values tree for TOML: whole floats become integers (YAML numbers arrive as
float64 and toToml would write `60000.0` or `3.6e+06`, which integer keys reject) and
null entries are dropped (TOML has no null; the runtime's default applies).
Call with (dict "in" VALUE "out" (dict)); the result is in .out.v.
*/}}
{{- define "mcp-runtime.tomlValue" -}}
{{- $v := .in }}
{{- if kindIs "float64" $v }}
{{- if eq $v (floor $v) }}{{ $_ := set .out "v" (int64 $v) }}{{ else }}{{ $_ := set .out "v" $v }}{{ end }}
{{- else if kindIs "map" $v }}
{{- $m := dict }}
{{- range $k, $x := $v }}
{{- if not (kindIs "invalid" $x) }}
{{- $r := dict }}{{ include "mcp-runtime.tomlValue" (dict "in" $x "out" $r) }}{{ $_ := set $m $k $r.v }}
{{- end }}
{{- end }}
{{- $_ := set .out "v" $m }}
{{- else if kindIs "slice" $v }}
{{- $l := list }}
{{- range $x := $v }}
{{- $r := dict }}{{ include "mcp-runtime.tomlValue" (dict "in" $x "out" $r) }}{{ $l = append $l $r.v }}
{{- end }}
{{- $_ := set .out "v" $l }}
{{- else }}
{{- $_ := set .out "v" $v }}
{{- end }}
{{- end }}

{{/* Host names the runtime accepts: localhost (port-forward), the Service's DNS names, the ingress hosts, then config.server.allowed_hosts. */}}
{{- define "mcp-runtime.allowedHosts" -}}
{{- $svc := include "mcp-runtime.fullname" . }}
{{- $ns := .Release.Namespace }}
{{- $hosts := list "localhost" "127.0.0.1" "[::1]" $svc (printf "%s.%s" $svc $ns) (printf "%s.%s.svc" $svc $ns) (printf "%s.%s.svc.cluster.local" $svc $ns) }}
{{- if .Values.ingress.enabled }}
{{- range .Values.ingress.hosts }}{{ $hosts = append $hosts . }}{{ end }}
{{- end }}
{{- $hosts = concat $hosts (default list .Values.config.server.allowed_hosts) }}
{{- toJson (uniq $hosts) }}
{{- end }}

{{/* The runtime's configuration file (TOML), from .Values.config plus what the chart owns. */}}
{{- define "mcp-runtime.configToml" -}}
{{- $cfg := deepCopy .Values.config }}
{{- $server := default dict $cfg.server }}
{{- $_ := set $server "listen" (printf "0.0.0.0:%d" (int .Values.containerPort)) }}
{{- $_ := set $server "allowed_hosts" (include "mcp-runtime.allowedHosts" . | fromJsonArray) }}
{{- $_ := set $server "shutdown_grace_ms" (int64 (include "mcp-runtime.shutdownGraceMs" .)) }}
{{- $_ := set $cfg "server" $server }}
{{- $rs := default dict $cfg.request_state }}
{{- $keys := list }}
{{- $dir := .Values.requestState.keyRing.mountPath }}
{{- range .Values.requestState.keyRing.keys }}
{{- $keys = append $keys (dict "id" .id "secret_file" (printf "%s/%s" $dir .secretKey)) }}
{{- end }}
{{- $_ := set $rs "keys" $keys }}
{{- $_ := set $cfg "request_state" $rs }}
{{- $out := dict }}
{{- include "mcp-runtime.tomlValue" (dict "in" $cfg "out" $out) }}
{{- toToml $out.v }}
{{- end }}
