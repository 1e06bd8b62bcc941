package main

// What the API server's validation refuses that strict decoding into the types cannot see.

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func checkObject(obj runtime.Object, gvk *schema.GroupVersionKind) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	errs := func(list field.ErrorList) {
		for _, e := range list {
			add("%s", e.Error())
		}
	}
	if meta, ok := obj.(metav1.Object); ok {
		name := meta.GetName()
		if name == "" {
			add("metadata.name is empty")
		}
		nameRule := validation.IsDNS1123Subdomain
		if gvk.Kind == "Service" {
			nameRule = validation.IsDNS1035Label // a Service name becomes a DNS label
		}
		for _, msg := range nameRule(name) {
			add("metadata.name %q: %s", name, msg)
		}
		errs(metavalidation.ValidateLabels(meta.GetLabels(), field.NewPath("metadata", "labels")))
		errs(apivalidation.ValidateAnnotations(meta.GetAnnotations(), field.NewPath("metadata", "annotations")))
	}
	switch o := obj.(type) {
	case *appsv1.Deployment:
		problems = append(problems, checkSelector(o.Spec.Selector, o.Spec.Template.Labels)...)
		problems = append(problems, checkPod(&o.Spec.Template.Spec, field.NewPath("spec", "template", "spec"))...)
		errs(metavalidation.ValidateLabels(o.Spec.Template.Labels, field.NewPath("spec", "template", "metadata", "labels")))
		errs(apivalidation.ValidateAnnotations(o.Spec.Template.Annotations, field.NewPath("spec", "template", "metadata", "annotations")))
	case *appsv1.StatefulSet:
		problems = append(problems, checkSelector(o.Spec.Selector, o.Spec.Template.Labels)...)
		problems = append(problems, checkPod(&o.Spec.Template.Spec, field.NewPath("spec", "template", "spec"))...)
	case *batchv1.Job:
		problems = append(problems, checkPod(&o.Spec.Template.Spec, field.NewPath("spec", "template", "spec"))...)
		if p := o.Spec.Template.Spec.RestartPolicy; p != corev1.RestartPolicyNever && p != corev1.RestartPolicyOnFailure {
			add("spec.template.spec.restartPolicy must be Never or OnFailure for a Job, got %q", p)
		}
	case *corev1.Service:
		for i, port := range o.Spec.Ports {
			if port.Name != "" {
				for _, msg := range validation.IsValidPortName(port.Name) {
					add("spec.ports[%d].name %q: %s", i, port.Name, msg)
				}
			}
			if len(o.Spec.Ports) > 1 && port.Name == "" {
				add("spec.ports[%d].name is required when a Service has several ports", i)
			}
			if port.TargetPort.Type == intstr.String {
				for _, msg := range validation.IsValidPortName(port.TargetPort.StrVal) {
					add("spec.ports[%d].targetPort %q: %s", i, port.TargetPort.StrVal, msg)
				}
			}
		}
		if o.Spec.ClusterIP == corev1.ClusterIPNone && o.Spec.Type != "" && o.Spec.Type != corev1.ServiceTypeClusterIP {
			add("a headless Service must be of type ClusterIP")
		}
	case *corev1.Secret:
		for key := range o.Data {
			for _, msg := range validation.IsConfigMapKey(key) {
				add("data key %q: %s", key, msg)
			}
		}
		for key := range o.StringData {
			for _, msg := range validation.IsConfigMapKey(key) {
				add("stringData key %q: %s", key, msg)
			}
		}
		if o.Type == corev1.SecretTypeTLS {
			_, crt := o.Data[corev1.TLSCertKey]
			_, key := o.Data[corev1.TLSPrivateKeyKey]
			_, scrt := o.StringData[corev1.TLSCertKey]
			_, skey := o.StringData[corev1.TLSPrivateKeyKey]
			if !(crt || scrt) || !(key || skey) {
				add("a kubernetes.io/tls Secret needs tls.crt and tls.key")
			}
		}
	case *corev1.ConfigMap:
		for key := range o.Data {
			for _, msg := range validation.IsConfigMapKey(key) {
				add("data key %q: %s", key, msg)
			}
		}
	case *policyv1.PodDisruptionBudget:
		if (o.Spec.MinAvailable == nil) == (o.Spec.MaxUnavailable == nil) {
			add("spec: exactly one of minAvailable and maxUnavailable")
		}
		if o.Spec.Selector == nil || (len(o.Spec.Selector.MatchLabels) == 0 && len(o.Spec.Selector.MatchExpressions) == 0) {
			add("spec.selector is empty: it would select every pod of the namespace")
		}
	case *autoscalingv2.HorizontalPodAutoscaler:
		if o.Spec.MinReplicas != nil && *o.Spec.MinReplicas > o.Spec.MaxReplicas {
			add("spec.minReplicas %d is above spec.maxReplicas %d", *o.Spec.MinReplicas, o.Spec.MaxReplicas)
		}
		if o.Spec.MaxReplicas < 1 {
			add("spec.maxReplicas must be at least 1")
		}
	case *networkingv1.NetworkPolicy:
		for i, rule := range o.Spec.Ingress {
			for j, port := range rule.Ports {
				if port.Port != nil && port.Port.Type == intstr.String {
					for _, msg := range validation.IsValidPortName(port.Port.StrVal) {
						add("spec.ingress[%d].ports[%d].port %q: %s", i, j, port.Port.StrVal, msg)
					}
				}
			}
		}
		for _, t := range o.Spec.PolicyTypes {
			if t != networkingv1.PolicyTypeIngress && t != networkingv1.PolicyTypeEgress {
				add("spec.policyTypes: unknown %q", t)
			}
		}
	case *networkingv1.Ingress:
		for i, rule := range o.Spec.Rules {
			if rule.Host != "" {
				for _, msg := range validation.IsDNS1123Subdomain(rule.Host) {
					add("spec.rules[%d].host %q: %s", i, rule.Host, msg)
				}
			}
			if rule.HTTP != nil {
				for j, path := range rule.HTTP.Paths {
					if path.PathType == nil {
						add("spec.rules[%d].http.paths[%d].pathType is required", i, j)
					}
				}
			}
		}
	}
	return problems
}

func checkSelector(selector *metav1.LabelSelector, templateLabels map[string]string) []string {
	if selector == nil {
		return []string{"spec.selector is required"}
	}
	s, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil {
		return []string{fmt.Sprintf("spec.selector: %v", err)}
	}
	if s.Empty() || !s.Matches(labels.Set(templateLabels)) {
		return []string{"spec.selector does not match the pod template's labels"}
	}
	return nil
}

func checkPod(pod *corev1.PodSpec, path *field.Path) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	volumes := map[string]bool{}
	for i, v := range pod.Volumes {
		for _, msg := range validation.IsDNS1123Label(v.Name) {
			add("%s: %q: %s", path.Child("volumes").Index(i).Child("name"), v.Name, msg)
		}
		if volumes[v.Name] {
			add("%s: duplicate volume %q", path.Child("volumes").Index(i), v.Name)
		}
		volumes[v.Name] = true
	}
	names := map[string]bool{}
	check := func(kind string, i int, c *corev1.Container) {
		p := path.Child(kind).Index(i)
		for _, msg := range validation.IsDNS1123Label(c.Name) {
			add("%s: %q: %s", p.Child("name"), c.Name, msg)
		}
		if names[c.Name] {
			add("%s: duplicate container name %q", p.Child("name"), c.Name)
		}
		names[c.Name] = true
		if c.Image == "" {
			add("%s is required", p.Child("image"))
		}
		ports := map[string]bool{}
		for j, port := range c.Ports {
			if port.Name != "" {
				for _, msg := range validation.IsValidPortName(port.Name) {
					add("%s: %q: %s", p.Child("ports").Index(j).Child("name"), port.Name, msg)
				}
				ports[port.Name] = true
			}
		}
		seenEnv := map[string]bool{}
		for j, env := range c.Env {
			for _, msg := range validation.IsEnvVarName(env.Name) {
				add("%s: %q: %s", p.Child("env").Index(j).Child("name"), env.Name, msg)
			}
			if seenEnv[env.Name] {
				add("%s: %q set twice", p.Child("env").Index(j).Child("name"), env.Name)
			}
			seenEnv[env.Name] = true
			if env.Value != "" && env.ValueFrom != nil {
				add("%s: value and valueFrom are exclusive", p.Child("env").Index(j))
			}
			if ref := env.ValueFrom; ref != nil && ref.SecretKeyRef != nil && (ref.SecretKeyRef.Name == "" || ref.SecretKeyRef.Key == "") {
				add("%s: secretKeyRef needs a name and a key", p.Child("env").Index(j))
			}
		}
		for j, m := range c.VolumeMounts {
			if !volumes[m.Name] {
				add("%s: no volume named %q", p.Child("volumeMounts").Index(j), m.Name)
			}
		}
		for name, probe := range map[string]*corev1.Probe{"livenessProbe": c.LivenessProbe, "readinessProbe": c.ReadinessProbe, "startupProbe": c.StartupProbe} {
			if probe == nil {
				continue
			}
			handlers := 0
			var port *intstr.IntOrString
			if probe.HTTPGet != nil {
				handlers++
				port = &probe.HTTPGet.Port
			}
			if probe.TCPSocket != nil {
				handlers++
				port = &probe.TCPSocket.Port
			}
			if probe.Exec != nil {
				handlers++
			}
			if probe.GRPC != nil {
				handlers++
			}
			if handlers != 1 {
				add("%s: exactly one handler, got %d", p.Child(name), handlers)
			}
			if port != nil && port.Type == intstr.String && !ports[port.StrVal] {
				add("%s: no container port named %q", p.Child(name), port.StrVal)
			}
			if name != "readinessProbe" && probe.SuccessThreshold > 1 {
				add("%s.successThreshold must be 1", p.Child(name))
			}
		}
	}
	for i := range pod.InitContainers {
		check("initContainers", i, &pod.InitContainers[i])
	}
	for i := range pod.Containers {
		check("containers", i, &pod.Containers[i])
	}
	if len(pod.Containers) == 0 {
		add("%s: a pod needs a container", path.Child("containers"))
	}
	return problems
}
