// kube-check: strict offline validation of rendered Kubernetes manifests against Kubernetes' own Go types.
//
// Reads a multi-document YAML stream (helm template output) on stdin or from the files named as arguments.
// Every document must be a kind this checker knows (the built-in API groups the chart uses, plus mirrors of
// the ServiceMonitor and cert-manager CRD fields), and must decode strictly: an unknown or duplicated field,
// a wrong type, or an unknown apiVersion/kind is an error. On top of decoding it checks what the API server
// would refuse that the types cannot express: object names, label keys and values, port and env names,
// selectors matching their pod templates. Exits 1 naming every problem; prints one summary line otherwise.
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

func main() {
	scheme := newScheme()
	decoder := json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme, scheme, json.SerializerOptions{Yaml: true, Strict: true})
	var inputs []namedReader
	if len(os.Args) > 1 {
		for _, name := range os.Args[1:] {
			f, err := os.Open(name)
			if err != nil {
				fail(err.Error())
			}
			defer f.Close()
			inputs = append(inputs, namedReader{name, f})
		}
	} else {
		inputs = append(inputs, namedReader{"stdin", os.Stdin})
	}
	var problems []string
	count := 0
	kinds := map[string]int{}
	for _, in := range inputs {
		reader := utilyaml.NewYAMLReader(bufio.NewReader(in.r))
		for doc := 1; ; doc++ {
			raw, err := reader.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: document %d: %v", in.name, doc, err))
				break
			}
			if isEmpty(raw) {
				continue
			}
			source := fmt.Sprintf("%s: document %d", in.name, doc)
			if s := sourceComment(raw); s != "" {
				source = fmt.Sprintf("%s (%s)", source, s)
			}
			obj, gvk, err := decoder.Decode(raw, nil, nil)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: %v", source, err))
				continue
			}
			count++
			kinds[gvk.Kind]++
			for _, p := range checkObject(obj, gvk) {
				problems = append(problems, fmt.Sprintf("%s %s: %s", source, describe(obj, gvk), p))
			}
		}
	}
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintln(os.Stderr, p)
		}
		fmt.Fprintf(os.Stderr, "kube-check: %d problem(s) in %d object(s)\n", len(problems), count)
		os.Exit(1)
	}
	if count == 0 {
		fail("no Kubernetes objects in the input")
	}
	fmt.Printf("kube-check: %d object(s) valid %v\n", count, kinds)
}

type namedReader struct {
	name string
	r    io.Reader
}

func fail(message string) {
	fmt.Fprintln(os.Stderr, "kube-check:", message)
	os.Exit(1)
}

func isEmpty(raw []byte) bool {
	for _, line := range bytes.Split(raw, []byte("\n")) {
		trimmed := strings.TrimSpace(string(line))
		if trimmed != "" && !strings.HasPrefix(trimmed, "#") && trimmed != "---" {
			return false
		}
	}
	return true
}

// sourceComment is helm's "# Source: chart/templates/x.yaml" line, to name the template in errors.
func sourceComment(raw []byte) string {
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "# Source: ") {
			return strings.TrimPrefix(line, "# Source: ")
		}
	}
	return ""
}

func describe(obj runtime.Object, gvk *schema.GroupVersionKind) string {
	if m, ok := obj.(interface{ GetName() string }); ok {
		return fmt.Sprintf("%s/%s", gvk.Kind, m.GetName())
	}
	return gvk.Kind
}
