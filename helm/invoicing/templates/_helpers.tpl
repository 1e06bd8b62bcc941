{{- define "invoicing.labels" -}}
app.kubernetes.io/name: {{ .name }}
app.kubernetes.io/part-of: invoicing
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- end -}}

{{- define "invoicing.secretName" -}}
{{- default (printf "%s-secrets" .Release.Name) .Values.secrets.existingSecret -}}
{{- end -}}

{{/* Hardened container defaults shared by every workload. */}}
{{- define "invoicing.containerSecurity" -}}
securityContext:
  runAsNonRoot: true
  runAsUser: 1000
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  capabilities:
    drop: ["ALL"]
  seccompProfile:
    type: RuntimeDefault
{{- end -}}

{{/* Environment every process reads (services/shared/config.ts). */}}
{{- define "invoicing.env" -}}
- name: MONGO_URL
  value: {{ .Values.engines.mongoUrl | quote }}
- name: KAFKA_BROKERS
  value: {{ .Values.engines.kafkaBrokers | quote }}
- name: REDIS_URL
  value: {{ .Values.engines.redisUrl | quote }}
- name: MINIO_ENDPOINT
  value: {{ .Values.engines.minio.endpoint | quote }}
- name: MINIO_PORT
  value: {{ .Values.engines.minio.port | quote }}
- name: MINIO_USE_SSL
  value: {{ .Values.engines.minio.useSSL | quote }}
- name: LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
- name: SHUTDOWN_DRAIN_MS
  value: {{ .Values.shutdownDrainMs | quote }}
- name: POD_NAME
  valueFrom: { fieldRef: { fieldPath: metadata.name } }
{{- range $env, $key := dict "JWT_SECRET" "jwtSecret" "CURSOR_SECRET" "cursorSecret" "URL_SECRET" "urlSecret" "MINIO_ACCESS_KEY" "minioAccessKey" "MINIO_SECRET_KEY" "minioSecretKey" }}
- name: {{ $env }}
  valueFrom: { secretKeyRef: { name: {{ include "invoicing.secretName" $ }}, key: {{ $key }} } }
{{- end }}
{{- end -}}

{{/* Deployment + Service of one gRPC service. Args: root, name, values. */}}
{{- define "invoicing.grpcService" -}}
{{- $root := .root -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .name }}
  labels: {{- include "invoicing.labels" . | nindent 4 }}
spec:
  replicas: {{ .values.replicas }}
  selector:
    matchLabels: {{- include "invoicing.labels" . | nindent 6 }}
  template:
    metadata:
      labels: {{- include "invoicing.labels" . | nindent 8 }}
    spec:
      automountServiceAccountToken: false
      terminationGracePeriodSeconds: 30
      securityContext:
        runAsNonRoot: true
        fsGroup: 1000
      containers:
        - name: {{ .name }}
          image: "{{ $root.Values.image.repository }}:{{ $root.Values.image.tag }}"
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          {{- include "invoicing.containerSecurity" . | nindent 10 }}
          env:
            - name: SERVICE
              value: {{ .name }}
            - name: GRPC_HOST
              value: "0.0.0.0"
            - name: GRPC_PORT
              value: {{ $root.Values.grpcPort | quote }}
            {{- include "invoicing.peerEnv" $root | nindent 12 }}
            {{- include "invoicing.env" $root | nindent 12 }}
            {{- with .values.env }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
            {{- range $env, $key := .values.secretEnv }}
            - name: {{ $env }}
              valueFrom: { secretKeyRef: { name: {{ include "invoicing.secretName" $root }}, key: {{ $key }}, optional: true } }
            {{- end }}
          ports:
            - name: grpc
              containerPort: {{ $root.Values.grpcPort }}
          readinessProbe:
            grpc: { port: {{ $root.Values.grpcPort }} }
            periodSeconds: 5
          livenessProbe:
            grpc: { port: {{ $root.Values.grpcPort }} }
            periodSeconds: 10
          resources: {{- toYaml .values.resources | nindent 12 }}
          volumeMounts:
            - { name: tmp, mountPath: /tmp }
      volumes:
        - { name: tmp, emptyDir: {} }
---
apiVersion: v1
kind: Service
metadata:
  name: {{ .name }}
  labels: {{- include "invoicing.labels" . | nindent 4 }}
spec:
  selector: {{- include "invoicing.labels" . | nindent 4 }}
  ports:
    - name: grpc
      port: {{ $root.Values.grpcPort }}
      targetPort: grpc
      appProtocol: grpc
{{- end -}}

{{/* Addresses of every service, for the gateway and for services calling peers. */}}
{{- define "invoicing.peerEnv" -}}
{{- range $name := list "identity" "contacts" "documents" "rendering" }}
- name: {{ upper $name }}_ADDR
  value: "{{ $name }}:{{ $.Values.grpcPort }}"
{{- end }}
{{- end -}}
