package trace

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"github.com/kubeproof/kubeproof/fixtures"
	"github.com/kubeproof/kubeproof/internal/jsonschema"
)

func TestParseManifestFixtures(t *testing.T) {
	for _, tc := range []struct {
		file, kind, name string
		replicas         int
	}{
		{"pod.yaml", "Pod", "web", 1},
		{"deployment.yaml", "Deployment", "nginx-deployment", 3},
	} {
		data, err := fixtures.Read(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		w, err := parseManifest(data)
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if w.kind != tc.kind || w.name != tc.name || w.replicas != tc.replicas || len(w.labels) == 0 {
			t.Errorf("%s: got %+v", tc.file, w)
		}
	}
}

func TestParseManifestRejects(t *testing.T) {
	for manifest, want := range map[string]string{
		"kind: Service\nmetadata: {name: s}\n": "trace follows one Pod or one Deployment",
		"kind: Pod\nmetadata: {name: a, labels: {x: y}}\n---\nkind: Pod\nmetadata: {name: b, labels: {x: y}}\n": "exactly one",
		"kind: Pod\nmetadata: {labels: {x: y}}\n": "no metadata.name",
		"kind: Pod\nmetadata: {name: a}\n":        "no labels",
		"":                                        "has 0 Pods",
	} {
		_, err := parseManifest([]byte(manifest))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want an error saying %q", manifest, err, want)
		}
	}
}

func TestQuantileNearestRank(t *testing.T) {
	vals := make([]float64, 100)
	for i := range vals {
		vals[i] = float64(i + 1)
	}
	for q, want := range map[float64]float64{0.5: 50, 0.9: 90, 0.99: 99, 1: 100} {
		if got := Quantile(vals, q); got != want {
			t.Errorf("q%v: got %v, want %v", q, got, want)
		}
	}
	if got := Quantile([]float64{7}, 0.99); got != 7 {
		t.Errorf("one value: got %v", got)
	}
}

func TestSummarizeSkipsUntimedRuns(t *testing.T) {
	v := func(f float64) *float64 { return &f }
	runs := []Run{
		{Stages: []Stage{{Name: "a", Ms: v(1), Source: SourceAudit}, {Name: "b", Source: SourceNone}}},
		{Stages: []Stage{{Name: "a", Ms: v(3), Source: SourceAudit}, {Name: "b", Ms: v(5), Source: SourceWatch}}},
	}
	s := summarize(runs)
	if s[0].N != 2 || s[0].P50 != 1 || s[0].P99 != 3 {
		t.Errorf("a: %+v", s[0])
	}
	if s[1].N != 1 || s[1].P50 != 5 {
		t.Errorf("b: %+v", s[1])
	}
}

func TestChartIsWellFormedSVG(t *testing.T) {
	v := func(f float64) *float64 { return &f }
	r := &Result{Manifest: "pod.yaml", Runs: []Run{{Stages: []Stage{
		{Name: "request received", Ms: v(0), Source: SourceAudit},
		{Name: "authenticated, authorized", Source: SourceNone},
		{Name: "Ready <&>", Ms: v(900), Source: SourceAudit},
	}}}}
	svg := Chart(r)
	dec := xml.NewDecoder(strings.NewReader(svg))
	for {
		if _, err := dec.Token(); err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("chart is not well-formed XML: %v", err)
			}
			break
		}
	}
	if !strings.Contains(svg, "Ready &lt;&amp;&gt;") || !strings.Contains(svg, "not timed") {
		t.Errorf("chart lacks an escaped label or the untimed note")
	}
}

// trace -o json (WriteJSON) is what schemas/output says, an untimed stage
// (null) included.
func TestJSONValidates(t *testing.T) {
	v := func(f float64) *float64 { return &f }
	runs := []Run{
		{Namespace: "kp-1", Started: time.Unix(1000, 0).UTC(), Pod: "p", Node: "n", Stages: []Stage{{Name: "a", Ms: v(1), Source: SourceAudit}, {Name: "b", Source: SourceNone, Note: "not seen"}}},
		{Namespace: "kp-2", Started: time.Unix(1010, 0).UTC(), Pod: "q", Node: "n", Stages: []Stage{{Name: "a", Ms: v(3), Source: SourceAudit}, {Name: "b", Ms: v(5), Source: SourceWatch}}},
	}
	r := &Result{SchemaVersion: Schema, Manifest: "pod.yaml", Kind: "Pod", Cluster: "kubeproof", Provider: "local", Runs: runs, Summary: summarize(runs)}
	var b bytes.Buffer
	if err := WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	if err := jsonschema.Validate("../../../schemas/output/trace-v1.json", b.Bytes()); err != nil {
		t.Errorf("trace -o json: %v\n%s", err, b.String())
	}
}
