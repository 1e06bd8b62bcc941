{{/*
Deployment, Services (ClusterIP + headless), HorizontalPodAutoscaler and PodDisruptionBudget of one gRPC
service. Args: root, component, values (the component's values).
*/}}
{{- define "invoicing.grpcService" -}}
{{- $root := .root -}}
{{- $v := .values -}}
{{- $needs := splitList " " (include "invoicing.enginesOf" .) | compact -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "invoicing.fullname" . }}
  labels: {{- include "invoicing.labels" . | nindent 4 }}
spec:
  {{- if not $v.autoscaling.enabled }}
  replicas: {{ $v.replicas }}
  {{- end }}
  revisionHistoryLimit: 5
  strategy:
    type: RollingUpdate
    rollingUpdate: { maxUnavailable: 0, maxSurge: 1 }
  selector:
    matchLabels: {{- include "invoicing.selectorLabels" . | nindent 6 }}
  template:
    metadata: {{- include "invoicing.podMetadata" . | nindent 6 }}
    spec:
      {{- include "invoicing.podSpecCommon" . | nindent 6 }}
      terminationGracePeriodSeconds: {{ $v.terminationGracePeriodSeconds }}
      containers:
        - name: {{ .component }}
          image: {{ include "invoicing.image" . | quote }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          {{- include "invoicing.containerSecurity" $root | nindent 10 }}
          envFrom:
            - configMapRef: { name: {{ printf "%s-config" $root.Release.Name | quote }} }
          env:
            {{- include "invoicing.commonEnv" . | nindent 12 }}
            - name: GRPC_HOST
              value: "0.0.0.0"
            {{- /* tls.enabled=false is the operator's choice of plaintext (values.yaml): the servers would refuse it otherwise. */}}
            {{- if not $root.Values.tls.enabled }}
            - name: GRPC_INSECURE_ALLOW_PLAINTEXT_NETWORK
              value: "i-understand"
            {{- end }}
            - name: GRPC_PORT
              value: {{ $root.Values.ports.grpc | quote }}
            - name: GRPC_HEALTH_PORT
              value: {{ $root.Values.ports.health | quote }}
            {{- if has .component (include "invoicing.adminServices" $root | splitList " ") }}
            - name: ADMIN_GRPC_PORT
              value: {{ $root.Values.ports.admin | quote }}
            {{- end }}
            {{- include "invoicing.peerEnv" . | nindent 12 }}
            {{- include "invoicing.engineSecretEnv" (dict "root" $root "needs" $needs) | nindent 12 }}
            {{- include "invoicing.appSecretEnv" . | nindent 12 }}
            {{- range $v.env }}
            - {{ toJson . }}
            {{- end }}
          ports:
            - { name: grpc, containerPort: {{ $root.Values.ports.grpc }}, protocol: TCP }
            {{- if has .component (include "invoicing.adminServices" $root | splitList " ") }}
            - { name: grpc-admin, containerPort: {{ $root.Values.ports.admin }}, protocol: TCP }
            {{- end }}
            - { name: grpc-health, containerPort: {{ $root.Values.ports.health }}, protocol: TCP }
            - { name: metrics, containerPort: {{ $root.Values.ports.metrics }}, protocol: TCP }
          startupProbe: {{- include "invoicing.grpcProbe" (merge (dict "probe" $root.Values.probes.startup) .) | nindent 12 }}
          readinessProbe: {{- include "invoicing.grpcProbe" (merge (dict "probe" $root.Values.probes.readiness) .) | nindent 12 }}
          livenessProbe: {{- include "invoicing.grpcProbe" (merge (dict "probe" $root.Values.probes.liveness) .) | nindent 12 }}
          resources: {{- toYaml $v.resources | nindent 12 }}
          volumeMounts: {{- include "invoicing.volumeMounts" . | nindent 12 }}
      volumes: {{- include "invoicing.volumes" . | nindent 8 }}
---
{{- /* For in-cluster tools and humans (grpcurl); the processes dial the headless Service below. */}}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "invoicing.fullname" . }}
  labels: {{- include "invoicing.labels" . | nindent 4 }}
spec:
  type: ClusterIP
  selector: {{- include "invoicing.selectorLabels" . | nindent 4 }}
  ports:
    - { name: grpc, port: {{ $root.Values.ports.grpc }}, targetPort: grpc, protocol: TCP, appProtocol: grpc }
    - { name: metrics, port: {{ $root.Values.ports.metrics }}, targetPort: metrics, protocol: TCP, appProtocol: http }
---
apiVersion: v1
kind: Service
metadata:
  name: {{ include "invoicing.headlessName" . }}
  labels: {{- include "invoicing.labels" . | nindent 4 }}
spec:
  type: ClusterIP
  clusterIP: None
  # Only ready pods are resolved: a pod failing readiness (draining) leaves the clients' round_robin.
  publishNotReadyAddresses: false
  selector: {{- include "invoicing.selectorLabels" . | nindent 4 }}
  ports:
    - { name: grpc, port: {{ $root.Values.ports.grpc }}, targetPort: grpc, protocol: TCP, appProtocol: grpc }
    {{- if has .component (include "invoicing.adminServices" $root | splitList " ") }}
    - { name: grpc-admin, port: {{ $root.Values.ports.admin }}, targetPort: grpc-admin, protocol: TCP, appProtocol: grpc }
    {{- end }}
{{ include "invoicing.scaling" . }}
{{- end -}}

{{/* HorizontalPodAutoscaler (when autoscaling.enabled) and PodDisruptionBudget (when pdb.enabled) of a component. */}}
{{- define "invoicing.scaling" -}}
{{- $v := .values -}}
{{- if $v.autoscaling.enabled }}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{ include "invoicing.fullname" . }}
  labels: {{- include "invoicing.labels" . | nindent 4 }}
spec:
  scaleTargetRef: { apiVersion: apps/v1, kind: Deployment, name: {{ include "invoicing.fullname" . }} }
  minReplicas: {{ $v.autoscaling.minReplicas }}
  maxReplicas: {{ $v.autoscaling.maxReplicas }}
  metrics:
    - type: Resource
      resource: { name: cpu, target: { type: Utilization, averageUtilization: {{ $v.autoscaling.targetCPUUtilizationPercentage }} } }
    {{- with $v.autoscaling.targetMemoryUtilizationPercentage }}
    - type: Resource
      resource: { name: memory, target: { type: Utilization, averageUtilization: {{ . }} } }
    {{- end }}
  behavior:
    scaleDown: { stabilizationWindowSeconds: 300 }
{{- end }}
{{- if $v.pdb.enabled }}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "invoicing.fullname" . }}
  labels: {{- include "invoicing.labels" . | nindent 4 }}
spec:
  maxUnavailable: {{ $v.pdb.maxUnavailable }}
  selector:
    matchLabels: {{- include "invoicing.selectorLabels" . | nindent 6 }}
{{- end }}
{{- end -}}
