package apiserver

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/onsi/ginkgo/v2"

	"github.com/kubeproof/kubeproof/framework"
)

// The schemas of the core group's OpenAPI v3 document that the checks read.
const (
	podSpecSchema       = "io.k8s.api.core.v1.PodSpec"
	containerPortSchema = "io.k8s.api.core.v1.ContainerPort"
)

// openAPISchema is the part of an OpenAPI v3 schema the checks read.
type openAPISchema struct {
	Required   []string `json:"required"`
	Properties map[string]struct {
		Maximum *float64 `json:"maximum"`
	} `json:"properties"`
}

// schemaValidation reads the OpenAPI v3 schemas the API server serves for
// Pods and compares them with what it refuses: a Pod without containers
// (a field the schema lists as required) and a container port of 70000
// (a range the schema may or may not state). Both requests are dry runs.
func schemaValidation(ctx context.Context, f *framework.Framework) openAPIEvidence {
	ginkgo.GinkgoHelper()
	var ev openAPIEvidence
	var index struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	r, err := framework.Request(ctx, f.RESTConfig, "GET", "/openapi/v3", nil)
	framework.ExpectNoError(err, "GET /openapi/v3")
	ev.IndexCode = r.Code
	if r.Code == 200 && json.Unmarshal(r.Body, &index) == nil && index.Paths["api/v1"].ServerRelativeURL != "" {
		doc, err := framework.Request(ctx, f.RESTConfig, "GET", index.Paths["api/v1"].ServerRelativeURL, nil)
		framework.ExpectNoError(err, "GET the core group's OpenAPI v3 document")
		var v3 struct {
			Components struct {
				Schemas map[string]openAPISchema `json:"schemas"`
			} `json:"components"`
		}
		if doc.Code == 200 && json.Unmarshal(doc.Body, &v3) == nil {
			schemas := v3.Components.Schemas
			ev.ServedPodSpec = len(schemas[podSpecSchema].Properties) > 0
			ev.ContainersRequiredInSchema = slices.Contains(schemas[podSpecSchema].Required, "containers")
			ev.PortRangeInSchema = schemas[containerPortSchema].Properties["containerPort"].Maximum != nil
		}
	}

	pod := func(name string, containers []any) map[string]any {
		spec := map[string]any{}
		if containers != nil {
			spec["containers"] = containers
		}
		return map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": name}, "spec": spec}
	}
	path := "/api/v1/namespaces/" + f.Namespace + "/pods?dryRun=All"
	missing, err := framework.Request(ctx, f.RESTConfig, "POST", path, pod("no-containers", nil))
	framework.ExpectNoError(err, "create a Pod without containers (dry run)")
	ev.MissingRequired = missing.Answer()
	ev.MissingRequiredRefused = missing.Code == 422 && causedBy(missing, "spec.containers")
	outOfRange, err := framework.Request(ctx, f.RESTConfig, "POST", path, pod("port-70000", []any{map[string]any{
		"name": "app", "image": "kubeproof.invalid/none", "ports": []any{map[string]any{"containerPort": 70000}}}}))
	framework.ExpectNoError(err, "create a Pod with container port 70000 (dry run)")
	ev.PortOutOfRange = outOfRange.Answer()
	ev.PortOutOfRangeRefused = outOfRange.Code == 422 && causedBy(outOfRange, "spec.containers[0].ports[0].containerPort")
	return ev
}

// causedBy says whether the API server's answer names field among its
// causes.
func causedBy(r framework.Response, field string) bool {
	if r.Status.Details == nil {
		return false
	}
	for _, c := range r.Status.Details.Causes {
		if c.Field == field {
			return true
		}
	}
	return false
}

// What the API server's OpenAPI v3 schemas say, and what its validation
// refused: for a built-in kind (Pod) and for a custom resource whose
// schema is ours.
type openAPIEvidence struct {
	// IndexCode is the status code of GET /openapi/v3.
	IndexCode int `json:"indexCode"`
	// ServedPodSpec: the core group's OpenAPI v3 document has the PodSpec
	// schema with properties.
	ServedPodSpec bool `json:"servedPodSpec"`
	// ContainersRequiredInSchema: that schema lists containers as required.
	ContainersRequiredInSchema bool `json:"containersRequiredInSchema"`
	// PortRangeInSchema: the served schema states a maximum for a
	// container port.
	PortRangeInSchema bool `json:"portRangeInSchema"`
	// MissingRequired is the answer to a Pod without containers (a dry run).
	MissingRequired framework.Answer `json:"missingRequired"`
	// MissingRequiredRefused: it was a 422 naming spec.containers among its
	// causes.
	MissingRequiredRefused bool `json:"missingRequiredRefused"`
	// PortOutOfRange is the answer to a Pod with container port 70000 (a dry
	// run).
	PortOutOfRange framework.Answer `json:"portOutOfRange"`
	// PortOutOfRangeRefused: it was a 422 naming that port's field among its
	// causes.
	PortOutOfRangeRefused bool `json:"portOutOfRangeRefused"`
	// CustomRuleRefused: a custom resource that breaks its CRD's schema
	// (spec.size above its maximum) was refused, naming the field.
	CustomRuleRefused bool             `json:"customRuleRefused"`
	CustomRuleAnswer  framework.Answer `json:"customRuleAnswer"`
}
