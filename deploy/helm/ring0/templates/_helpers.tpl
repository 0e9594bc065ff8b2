{{/* The release's resource name: <release>-ring0, or the release name when it already says ring0. */}}
{{- define "ring0.fullname" -}}
{{- if contains "ring0" .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-ring0" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- /* The webhooks' Service: the full name cut so the suffix keeps it within 63 characters. */}}
{{- define "ring0.webhooksName" -}}
{{- printf "%s-webhooks" (include "ring0.fullname" . | trunc 54 | trimSuffix "-") -}}
{{- end -}}

{{- define "ring0.labels" -}}
app.kubernetes.io/name: ring0
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "ring0.selectorLabels" -}}
app.kubernetes.io/name: ring0
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: server
{{- end -}}

{{- define "ring0.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "ring0.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The values a cluster install cannot do without, each with what to set. */}}
{{- define "ring0.validate" -}}
{{- if not .Values.publicUrl -}}
{{- fail "publicUrl is required: the URL browsers reach Ring0 at, e.g. --set publicUrl=https://ring0.example.com" -}}
{{- end -}}
{{- if and (not .Values.database.url) (not .Values.database.existingSecret) -}}
{{- fail "database.url or database.existingSecret is required: Ring0 in a cluster keeps its state in an external PostgreSQL (e.g. --set database.existingSecret=ring0-db)" -}}
{{- end -}}
{{- if not .Values.oidc.issuer -}}
{{- fail "oidc.issuer is required: Ring0 in a cluster signs users in with your OIDC provider (with oidc.clientId and oidc.clientSecret or oidc.existingSecret)" -}}
{{- end -}}
{{- if not .Values.oidc.clientId -}}
{{- fail "oidc.clientId is required with oidc.issuer" -}}
{{- end -}}
{{- if and (not .Values.oidc.clientSecret) (not .Values.oidc.existingSecret) -}}
{{- fail "oidc.clientSecret or oidc.existingSecret is required with oidc.issuer" -}}
{{- end -}}
{{- if and .Values.ingress.enabled (not .Values.gatewayUrl) -}}
{{- fail "gatewayUrl is required with ingress.enabled: the Ingress serves the panel, and kubectl must reach the kube gateway's own TLS port (a LoadBalancer or passthrough), e.g. --set gatewayUrl=https://k8s.ring0.example.com" -}}
{{- end -}}
{{- if and .Values.podDisruptionBudget.enabled (kindIs "float64" .Values.podDisruptionBudget.minAvailable) (ge (int .Values.podDisruptionBudget.minAvailable) (int .Values.replicaCount)) -}}
{{- fail "podDisruptionBudget.minAvailable must be lower than replicaCount, or no node could ever be drained" -}}
{{- end -}}
{{- end -}}

{{/* The gateway's public URL: gatewayUrl, else https://<publicUrl's host>:<service.gatewayPort>. */}}
{{- define "ring0.gatewayUrl" -}}
{{- if .Values.gatewayUrl -}}
{{- .Values.gatewayUrl -}}
{{- else -}}
{{- $host := (urlParse .Values.publicUrl).host | splitList ":" | first -}}
{{- if eq (int .Values.service.gatewayPort) 443 -}}
{{- printf "https://%s" $host -}}
{{- else -}}
{{- printf "https://%s:%d" $host (int .Values.service.gatewayPort) -}}
{{- end -}}
{{- end -}}
{{- end -}}
