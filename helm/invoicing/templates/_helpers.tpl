{{/*
Names, labels and the pieces every workload shares. Every object is named "<release>-<component>", so two
releases live side by side in one namespace.
*/}}

{{/* The gRPC services, in start order (a service's peers come before it). */}}
{{- define "invoicing.services" -}}
identity contacts documents rendering expenses
{{- end -}}

{{/* The services with admin bindings, served only on ports.admin (the admin CLI's callees). */}}
{{- define "invoicing.adminServices" -}}
identity documents
{{- end -}}

{{/*
What each workload is given, and nothing more (least privilege; docs/operations.md "Secrets per workload"):
the engines it connects to (credentials as secretKeyRefs, and the NetworkPolicy egress to them) and the
signing secrets it signs or verifies with. The services' lists are their modules' `needs`
(services/<name>/module.ts: `blobs` is minio); test/unit/helm-chart.test.ts holds the table and compares both.
Only identity signs sessions; the gateway verifies none itself (it asks identity), so it has no signing
secret. URL_SECRET signs the file-system blob store's URLs only: on MinIO nobody uses it.
smtp is given only when engines.smtp is set.
*/}}
{{- define "invoicing.needs" -}}
gateway: { engines: [redis, kafka], secrets: [] }
identity: { engines: [mongo, kafka, minio], secrets: [jwtSecret, cursorSecret] }
contacts: { engines: [mongo, kafka], secrets: [cursorSecret] }
documents: { engines: [mongo, kafka], secrets: [cursorSecret] }
rendering: { engines: [mongo, kafka, minio, smtp], secrets: [cursorSecret] }
expenses: { engines: [mongo, kafka, minio], secrets: [cursorSecret] }
admin: { engines: [], secrets: [] }
init: { engines: [mongo, kafka, minio], secrets: [] }
{{- end -}}

{{/* The engines a component connects to (invoicing.needs), smtp only when configured. Args: root, component. */}}
{{- define "invoicing.enginesOf" -}}
{{- $engines := (get (include "invoicing.needs" .root | fromYaml) .component).engines -}}
{{- $smtp := .root.Values.engines.smtp -}}
{{- if not (or $smtp.url $smtp.existingSecret) }}{{- $engines = without $engines "smtp" -}}{{- end -}}
{{- join " " $engines -}}
{{- end -}}

{{/* Who calls whom over gRPC (the peers each process dials): the NetworkPolicies admit exactly these. */}}
{{- define "invoicing.callers" -}}
identity: [gateway, documents, rendering, expenses]
contacts: [gateway, documents, expenses]
documents: [gateway, rendering, expenses]
rendering: [gateway]
expenses: [gateway]
{{- end -}}

{{/* The peers a component dials: the inverse of invoicing.callers (the gateway dials every service). */}}
{{- define "invoicing.peersOf" -}}
{{- $component := .component -}}
{{- $callers := include "invoicing.callers" .root | fromYaml -}}
{{- $peers := list -}}
{{- range $service := splitList " " (include "invoicing.services" .root) -}}
{{- if has $component (get $callers $service) -}}
{{- $peers = append $peers $service -}}
{{- end -}}
{{- end -}}
{{- join " " $peers -}}
{{- end -}}

{{- define "invoicing.fullname" -}}
{{- printf "%s-%s" .root.Release.Name .component | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The headless Service of a gRPC service: one DNS record per ready pod, for client-side round_robin. */}}
{{- define "invoicing.headlessName" -}}
{{- printf "%s-%s-headless" .root.Release.Name .component | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "invoicing.selectorLabels" -}}
app.kubernetes.io/name: invoicing
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "invoicing.labels" -}}
{{ include "invoicing.selectorLabels" . }}
app.kubernetes.io/part-of: invoicing
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "invoicing.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (printf "%s-invoicing" .Release.Name) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Image of a component: the rendering and expenses images are variants of the same tag (deploy/Dockerfile targets). */}}
{{- define "invoicing.image" -}}
{{- $image := .root.Values.image -}}
{{- $tag := default .root.Chart.AppVersion $image.tag -}}
{{- $suffix := get $image.variants .component | default "" -}}
{{- printf "%s:%s%s" $image.repository $tag $suffix -}}
{{- end -}}

{{- define "invoicing.secretName" -}}
{{- printf "%s-secrets" .Release.Name -}}
{{- end -}}

{{/*
A credential as a secretKeyRef: the user's Secret when `existingSecret` is set, else the chart's Secret.
Args: root, ref (a values map with existingSecret + existingSecretKey), key (the chart Secret's key).
*/}}
{{- define "invoicing.secretKeyRef" -}}
{{- if .ref.existingSecret -}}
secretKeyRef: { name: {{ .ref.existingSecret | quote }}, key: {{ .ref.existingSecretKey | quote }} }
{{- else -}}
secretKeyRef: { name: {{ .secretName | default (include "invoicing.secretName" .root) | quote }}, key: {{ .key | quote }} }
{{- end -}}
{{- end -}}

{{/* Credentials of the engines a workload needs (`needs`: names from invoicing.needs), each from a Secret (never a plain value); MinIO's address with its keys. */}}
{{- define "invoicing.engineSecretEnv" -}}
{{- $root := .root -}}
{{- $s := .secretName | default "" -}}
{{- $e := $root.Values.engines -}}
{{- if has "mongo" .needs }}
- name: MONGO_URL
  valueFrom: {{ include "invoicing.secretKeyRef" (dict "root" $root "ref" $e.mongo "key" "mongoUrl" "secretName" $s) | nindent 4 }}
{{- end }}
{{- if has "redis" .needs }}
- name: REDIS_URL
  valueFrom: {{ include "invoicing.secretKeyRef" (dict "root" $root "ref" $e.redis "key" "redisUrl" "secretName" $s) | nindent 4 }}
{{- end }}
{{- if has "kafka" .needs }}
- name: KAFKA_BROKERS
  valueFrom: {{ include "invoicing.secretKeyRef" (dict "root" $root "ref" $e.kafka "key" "kafkaBrokers" "secretName" $s) | nindent 4 }}
{{- end }}
{{- if has "minio" .needs }}
- name: MINIO_ENDPOINT
  value: {{ required "engines.minio.endpoint is required" $e.minio.endpoint | quote }}
- name: MINIO_PORT
  value: {{ $e.minio.port | quote }}
- name: MINIO_USE_SSL
  value: {{ $e.minio.useSSL | quote }}
- name: MINIO_BUCKET
  value: {{ $e.minio.bucket | quote }}
- name: MINIO_ACCESS_KEY
  valueFrom: {{ include "invoicing.secretKeyRef" (dict "root" $root "ref" (dict "existingSecret" $e.minio.existingSecret "existingSecretKey" $e.minio.accessKeyKey) "key" "minioAccessKey" "secretName" $s) | nindent 4 }}
- name: MINIO_SECRET_KEY
  valueFrom: {{ include "invoicing.secretKeyRef" (dict "root" $root "ref" (dict "existingSecret" $e.minio.existingSecret "existingSecretKey" $e.minio.secretKeyKey) "key" "minioSecretKey" "secretName" $s) | nindent 4 }}
{{- end }}
{{- if has "smtp" .needs }}
- name: SMTP_URL
  valueFrom: {{ include "invoicing.secretKeyRef" (dict "root" $root "ref" $e.smtp "key" "smtpUrl" "secretName" $s) | nindent 4 }}
{{- end }}
{{- end -}}

{{/* The signing secrets a component signs or verifies with (invoicing.needs), and only those. Args: root, component. */}}
{{- define "invoicing.appSecretEnv" -}}
{{- $root := .root -}}
{{- $env := dict "jwtSecret" "JWT_SECRET" "cursorSecret" "CURSOR_SECRET" "urlSecret" "URL_SECRET" -}}
{{- range $key := (get (include "invoicing.needs" $root | fromYaml) .component).secrets }}
- name: {{ get $env $key }}
  valueFrom:
    secretKeyRef: { name: {{ $root.Values.secrets.existingSecret | default (include "invoicing.secretName" $root) | quote }}, key: {{ $key | quote }} }
{{- end }}
{{- end -}}

{{/* gRPC address of a service for its clients: the headless Service, resolved by grpc-js per pod. */}}
{{- define "invoicing.grpcAddress" -}}
{{- printf "dns:///%s.%s.svc.%s:%v" (include "invoicing.headlessName" .) .root.Release.Namespace .root.Values.clusterDomain (.port | default .root.Values.ports.grpc) -}}
{{- end -}}

{{/* <NAME>_ADDR of each peer a component dials. */}}
{{- define "invoicing.peerEnv" -}}
{{- $root := .root -}}
{{- range $name := splitList " " (include "invoicing.peersOf" .) | compact }}
- name: {{ upper $name }}_ADDR
  value: {{ include "invoicing.grpcAddress" (dict "root" $root "component" $name) | quote }}
{{- end }}
{{- end -}}

{{/* Environment every process reads. Args: root, component. */}}
{{- define "invoicing.commonEnv" -}}
- name: SERVICE
  value: {{ .component | quote }}
- name: POD_NAME
  valueFrom: { fieldRef: { fieldPath: metadata.name } }
- name: POD_NAMESPACE
  valueFrom: { fieldRef: { fieldPath: metadata.namespace } }
{{- if .root.Values.tls.enabled }}
- name: GRPC_TLS_DIR
  value: /etc/invoicing/tls
{{- end }}
{{- if .root.Values.otel.enabled }}
- name: OTEL_SERVICE_NAME
  value: {{ printf "invoicing-%s" .component | quote }}
- name: OTEL_RESOURCE_ATTRIBUTES
  value: {{ printf "service.namespace=%s,k8s.namespace.name=%s,deployment.environment=%s,service.instance.id=$(POD_NAME)" .root.Release.Name .root.Release.Namespace .root.Values.otel.environment | quote }}
{{- end }}
{{- end -}}

{{/* Pod-level fields every workload shares. Args: root, component, values (the component's values). */}}
{{- define "invoicing.podSpecCommon" -}}
{{- $root := .root -}}
serviceAccountName: {{ include "invoicing.serviceAccountName" $root }}
automountServiceAccountToken: false
enableServiceLinks: false
securityContext: {{- toYaml $root.Values.podSecurityContext | nindent 2 }}
{{- with $root.Values.imagePullSecrets }}
imagePullSecrets: {{- toYaml . | nindent 2 }}
{{- end }}
{{- with (.values.nodeSelector | default $root.Values.nodeSelector) }}
nodeSelector: {{- toYaml . | nindent 2 }}
{{- end }}
{{- with (.values.tolerations | default $root.Values.tolerations) }}
tolerations: {{- toYaml . | nindent 2 }}
{{- end }}
{{- with (.values.affinity | default $root.Values.affinity) }}
affinity: {{- toYaml . | nindent 2 }}
{{- end }}
{{- if $root.Values.topologySpread.enabled }}
topologySpreadConstraints:
  {{- range $key := $root.Values.topologySpread.topologyKeys }}
  - maxSkew: {{ $root.Values.topologySpread.maxSkew }}
    topologyKey: {{ $key }}
    whenUnsatisfiable: {{ $root.Values.topologySpread.whenUnsatisfiable }}
    labelSelector:
      matchLabels: {{- include "invoicing.selectorLabels" $ | nindent 8 }}
  {{- end }}
{{- end }}
{{- end -}}

{{/* Pod template metadata: labels, the global and the component's annotations, checksums that roll pods when config changes. */}}
{{- define "invoicing.podMetadata" -}}
{{- $root := .root -}}
labels:
  {{- include "invoicing.labels" . | nindent 2 }}
  {{- with $root.Values.podLabels }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
annotations:
  checksum/config: {{ include (print $root.Template.BasePath "/configmap.yaml") $root | sha256sum }}
  checksum/secrets: {{ include "invoicing.secretsChecksum" $root }}
  {{- if $root.Values.tls.enabled }}
  checksum/tls: {{ include "invoicing.tlsChecksum" . }}
  {{- end }}
  {{- with (merge (dict) (.values.podAnnotations | default dict) $root.Values.podAnnotations) }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end -}}

{{/*
Checksum of every Secret the pods read: the chart's own (as rendered) and the existing ones (as they are in the
cluster at upgrade time, through lookup), so a rotated credential rolls the pods on the next upgrade.
*/}}
{{- define "invoicing.secretsChecksum" -}}
{{- $root := . -}}
{{- $parts := list (include (print $root.Template.BasePath "/secrets.yaml") $root) -}}
{{- $e := $root.Values.engines -}}
{{- range $name := list $root.Values.secrets.existingSecret $e.mongo.existingSecret $e.redis.existingSecret $e.kafka.existingSecret $e.minio.existingSecret $e.smtp.existingSecret | compact | uniq }}
{{- $existing := lookup "v1" "Secret" $root.Release.Namespace $name -}}
{{- $parts = append $parts (printf "%s=%v" $name (($existing).data | default dict | toJson)) -}}
{{- end -}}
{{- join "\n" $parts | sha256sum -}}
{{- end -}}

{{/*
Checksum of a component's certificate as the cluster holds it (lookup), with the values that shape it: a
re-issued certificate rolls the pods on the next upgrade. (Not a render of tls.yaml: that would generate keys
once more per pod template.)
*/}}
{{- define "invoicing.tlsChecksum" -}}
{{- $root := .root -}}
{{- $names := list (include "invoicing.tlsSecretName" .) -}}
{{- if not (or $root.Values.tls.existingSecrets $root.Values.tls.certManager.enabled) -}}
{{- $names = append $names (printf "%s-tls-ca" $root.Release.Name) -}}
{{- end -}}
{{- $parts := list (toJson $root.Values.tls) -}}
{{- range $name := $names -}}
{{- $existing := lookup "v1" "Secret" $root.Release.Namespace $name -}}
{{- $parts = append $parts (printf "%s=%v" $name (($existing).data | default dict | toJson)) -}}
{{- end -}}
{{- join "\n" $parts | sha256sum -}}
{{- end -}}

{{/* The components that carry a certificate of the mesh. */}}
{{- define "invoicing.tlsComponents" -}}
{{- $components := concat (list "gateway") (splitList " " (include "invoicing.services" .)) (ternary (list "admin") (list) .Values.admin.enabled) -}}
{{- join " " $components -}}
{{- end -}}

{{/*
The certificate Secret a component mounts: its own existing Secret (tls.existingSecrets.<component>), or the
chart's "<release>-<component>-tls" (generated or issued by cert-manager). Never one Secret for several
components: the servers authorise callers by the certificate's identity (invoicing.tlsCheck).
*/}}
{{- define "invoicing.tlsSecretName" -}}
{{- $existing := get (.root.Values.tls.existingSecrets | default dict) .component -}}
{{- if $existing -}}
{{- $existing -}}
{{- else -}}
{{- printf "%s-%s-tls" .root.Release.Name .component | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/*
Refuses certificate settings that would let one component act as another: the removed single shared
Secret (tls.existingSecret), existing Secrets for only some components, or one Secret for two components.
*/}}
{{- define "invoicing.tlsCheck" -}}
{{- $tls := .Values.tls -}}
{{- if $tls.existingSecret -}}
{{- fail "tls.existingSecret (one certificate for every component) is no longer accepted: every component needs a certificate of its own, as the gRPC servers authorise callers by certificate identity. Set tls.existingSecrets.<component> (gateway, identity, contacts, documents, rendering, expenses, admin) to one Secret each, or use tls.certManager (docs/operations.md, \"Certificates\")" -}}
{{- end -}}
{{- with $tls.existingSecrets -}}
{{- if $tls.certManager.enabled -}}
{{- fail "tls.existingSecrets and tls.certManager.enabled are exclusive: choose one source of certificates" -}}
{{- end -}}
{{- $seen := dict -}}
{{- range $component := splitList " " (include "invoicing.tlsComponents" $) -}}
{{- $name := get $tls.existingSecrets $component -}}
{{- if not $name -}}
{{- fail (printf "tls.existingSecrets.%s is required: with existing Secrets every component has its own certificate (CN or DNS SAN %q)" $component $component) -}}
{{- end -}}
{{- if hasKey $seen $name -}}
{{- fail (printf "tls.existingSecrets: %s and %s name the same Secret %q; each component needs a certificate of its own" (get $seen $name) $component $name) -}}
{{- end -}}
{{- $_ := set $seen $name $component -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Hardened container defaults (values: containerSecurityContext). */}}
{{- define "invoicing.containerSecurity" -}}
securityContext: {{- toYaml .Values.containerSecurityContext | nindent 2 }}
{{- end -}}

{{/* Volumes: a writable /tmp on a read-only root filesystem, and the component's certificate. */}}
{{- define "invoicing.volumes" -}}
- name: tmp
  emptyDir: { sizeLimit: {{ .root.Values.tmpSizeLimit | quote }} }
{{- if .root.Values.tls.enabled }}
- name: tls
  secret:
    secretName: {{ include "invoicing.tlsSecretName" . }}
    defaultMode: 0440
    items:
      - { key: tls.crt, path: tls.crt }
      - { key: tls.key, path: tls.key }
      - { key: ca.crt, path: ca.crt }
{{- end }}
{{- end -}}

{{- define "invoicing.volumeMounts" -}}
- { name: tmp, mountPath: /tmp }
{{- if .root.Values.tls.enabled }}
- { name: tls, mountPath: /etc/invoicing/tls, readOnly: true }
{{- end }}
{{- end -}}

{{/*
A gRPC health probe: the kubelet's own `grpc` probe on the plaintext health-only port (GRPC_HEALTH_PORT; the
kubelet cannot present a client certificate to the mTLS service port, and nothing but health is served there).
Args: root, probe (timing values).
*/}}
{{- define "invoicing.grpcProbe" -}}
grpc: { port: {{ .root.Values.ports.health }} }
{{- toYaml .probe | nindent 0 }}
{{- end -}}

{{/*
The names a component's certificate is valid for. First its identity, the bare component name (`identity`,
`admin`, …): servers authorise callers by it and clients verify the server by it (docs/architecture.md,
"Internal network"); then its Services (headless and ClusterIP, every DNS form) and localhost.
*/}}
{{- define "invoicing.tlsDnsNames" -}}
{{- $ns := .root.Release.Namespace -}}
{{- $domain := .root.Values.clusterDomain -}}
- {{ .component }}
{{- range $host := list (include "invoicing.fullname" .) (include "invoicing.headlessName" .) }}
- {{ $host }}
- {{ printf "%s.%s" $host $ns }}
- {{ printf "%s.%s.svc" $host $ns }}
- {{ printf "%s.%s.svc.%s" $host $ns $domain }}
{{- end }}
- localhost
{{- end -}}
