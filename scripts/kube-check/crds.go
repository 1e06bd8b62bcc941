package main

// Mirrors of the custom resources the chart renders, field for field as their CRDs define them (only the
// fields up to the depth the chart uses are typed; the decoder is strict, so a field the mirror lacks
// fails and must be added from the CRD, not guessed). Sources: prometheus-operator
// pkg/apis/monitoring/v1 (ServiceMonitor) and cert-manager pkg/apis/certmanager/v1 (Issuer, Certificate).

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

type ServiceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ServiceMonitorSpec `json:"spec"`
}

type ServiceMonitorSpec struct {
	JobLabel          string               `json:"jobLabel,omitempty"`
	Endpoints         []MonitorEndpoint    `json:"endpoints"`
	Selector          metav1.LabelSelector `json:"selector"`
	NamespaceSelector *NamespaceSelector   `json:"namespaceSelector,omitempty"`
}

type MonitorEndpoint struct {
	Port          string            `json:"port,omitempty"`
	Path          string            `json:"path,omitempty"`
	Scheme        string            `json:"scheme,omitempty"`
	Interval      string            `json:"interval,omitempty"`
	ScrapeTimeout string            `json:"scrapeTimeout,omitempty"`
	HonorLabels   bool              `json:"honorLabels,omitempty"`
	Params        map[string][]string `json:"params,omitempty"`
}

type NamespaceSelector struct {
	Any        bool     `json:"any,omitempty"`
	MatchNames []string `json:"matchNames,omitempty"`
}

type Issuer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              IssuerSpec `json:"spec"`
}

type IssuerSpec struct {
	SelfSigned *struct {
		CRLDistributionPoints []string `json:"crlDistributionPoints,omitempty"`
	} `json:"selfSigned,omitempty"`
	CA *struct {
		SecretName string `json:"secretName"`
	} `json:"ca,omitempty"`
}

type Certificate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              CertificateSpec `json:"spec"`
}

type CertificateSpec struct {
	SecretName     string          `json:"secretName"`
	CommonName     string          `json:"commonName,omitempty"`
	DNSNames       []string        `json:"dnsNames,omitempty"`
	Duration       *metav1.Duration `json:"duration,omitempty"`
	RenewBefore    *metav1.Duration `json:"renewBefore,omitempty"`
	IsCA           bool            `json:"isCA,omitempty"`
	Usages         []string        `json:"usages,omitempty"`
	IssuerRef      IssuerRef       `json:"issuerRef"`
	PrivateKey     *struct {
		Algorithm      string `json:"algorithm,omitempty"`
		Size           int    `json:"size,omitempty"`
		Encoding       string `json:"encoding,omitempty"`
		RotationPolicy string `json:"rotationPolicy,omitempty"`
	} `json:"privateKey,omitempty"`
	SecretTemplate *struct {
		Labels      map[string]string `json:"labels,omitempty"`
		Annotations map[string]string `json:"annotations,omitempty"`
	} `json:"secretTemplate,omitempty"`
}

type IssuerRef struct {
	Name  string `json:"name"`
	Kind  string `json:"kind,omitempty"`
	Group string `json:"group,omitempty"`
}

func (o *ServiceMonitor) DeepCopyObject() runtime.Object { c := *o; return &c }
func (o *Issuer) DeepCopyObject() runtime.Object         { c := *o; return &c }
func (o *Certificate) DeepCopyObject() runtime.Object    { c := *o; return &c }

func addCRDMirrors(scheme *runtime.Scheme) error {
	monitoring := schema.GroupVersion{Group: "monitoring.coreos.com", Version: "v1"}
	scheme.AddKnownTypes(monitoring, &ServiceMonitor{})
	certManager := schema.GroupVersion{Group: "cert-manager.io", Version: "v1"}
	scheme.AddKnownTypes(certManager, &Issuer{}, &Certificate{})
	return nil
}
