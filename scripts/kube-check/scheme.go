package main

import (
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// newScheme knows the built-in groups a chart may render (their Go types are the API server's own) and the
// CRD mirrors of crds.go. A kind outside it is refused rather than passed unchecked.
func newScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, appsv1.AddToScheme, batchv1.AddToScheme, policyv1.AddToScheme,
		autoscalingv2.AddToScheme, networkingv1.AddToScheme, rbacv1.AddToScheme, addCRDMirrors,
	} {
		if err := add(scheme); err != nil {
			panic(err)
		}
	}
	return scheme
}
