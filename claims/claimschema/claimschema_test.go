package claimschema

import (
	"bytes"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"
)

// The test runs in this package's directory, two below the repository's
// root.
const root = "../.."

// claimsFiles are the claims files the repository ships.
var claimsFiles = []string{"fixtures/claims/*.yaml", "claims/testdata/*.yaml"}

func TestShippedSchemaIsGenerated(t *testing.T) {
	want, err := Generate(root)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, ShippedPath))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not the schema of the claims types: run go generate ./claims/claimschema", ShippedPath)
	}
}

func compile(t *testing.T) *jsonschema.Schema {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, ShippedPath))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(ShippedPath, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(ShippedPath)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validate(s *jsonschema.Schema, data []byte) error {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		return err
	}
	return s.Validate(inst)
}

// Every claims file the repository ships validates against the schema and
// names it in its first line, by a path that leads to it.
func TestClaimsFilesValidate(t *testing.T) {
	s := compile(t)
	n := 0
	for _, pattern := range claimsFiles {
		files, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			n++
			rel, _ := filepath.Rel(root, f)
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := validate(s, data); err != nil {
				t.Errorf("%s: %v", rel, err)
			}
			first, _, _ := strings.Cut(string(data), "\n")
			named, ok := strings.CutPrefix(first, "# yaml-language-server: $schema=")
			if !ok {
				t.Errorf("%s: the first line is %q, not # yaml-language-server: $schema=<the schema's path>", rel, first)
				continue
			}
			if got := path.Join(path.Dir(filepath.ToSlash(rel)), named); got != ShippedPath {
				t.Errorf("%s names the schema %s, which is %s, not %s", rel, named, got, ShippedPath)
			}
		}
	}
	if n == 0 {
		t.Fatalf("no claims files under %v", claimsFiles)
	}
}

// The schema refuses what the loader refuses: a missing header, another
// version, an unknown field, a kind of claim that does not exist, and what
// the loader sets itself.
func TestSchemaRefuses(t *testing.T) {
	s := compile(t)
	const head = "apiVersion: kubeproof.io/v1alpha1\nkind: Claims\n"
	const doc = "document: {file: d.txt, title: t}\n"
	claim := func(extra string) string {
		return "claims: [{id: A-B, section: s, quote: q, statement: s, component: c, kind: behaviour, specs: [x-y], expect: [{evidence: e, equals: 1}]" + extra + "}]\n"
	}
	if err := validate(s, []byte(head+doc+claim(""))); err != nil {
		t.Fatalf("a valid file: %v", err)
	}
	for name, file := range map[string]string{
		"no header":      doc + claim(""),
		"other version":  strings.Replace(head, "v1alpha1", "v1", 1) + doc + claim(""),
		"unknown field":  head + doc + claim(", verdict: confirmed"),
		"unknown kind":   head + doc + strings.Replace(claim(""), "behaviour", "vibe", 1),
		"source written": head + doc + claim(", source: {file: f, line: 1}"),
		"no title":       head + "document: {file: d.txt}\n" + claim(""),
	} {
		if err := validate(s, []byte(file)); err == nil {
			t.Errorf("%s: valid", name)
		}
	}
}

// The schema has the fields the loader accepts: open, withinClaimed and
// anyMatches (a pattern or an object of patterns).
func TestSchemaAcceptsNewFields(t *testing.T) {
	s := compile(t)
	const file = "apiVersion: kubeproof.io/v1alpha1\nkind: Claims\ndocument: {file: d.txt, title: t}\nclaims:\n" +
		"- {id: A-OPEN, section: s, quote: q, statement: s, component: c, kind: behaviour, open: no spec yet}\n" +
		"- {id: A-TIME, section: s, quote: q, statement: s, component: c, kind: timing, specs: [x-y], claimed: 2s, expect: [{evidence: e, withinClaimed: true}]}\n" +
		"- {id: A-ANY, section: s, quote: q, statement: s, component: c, kind: behaviour, specs: [x-y], expect: [{evidence: e, anyMatches: '^a'}, {evidence: f, anyMatches: {verb: create}}]}\n"
	if err := validate(s, []byte(file)); err != nil {
		t.Errorf("a file with open, withinClaimed and anyMatches: %v", err)
	}
	if err := validate(s, []byte(strings.Replace(file, "withinClaimed: true", "withinClaimed: yes please", 1))); err == nil {
		t.Error("withinClaimed that is not a boolean: valid")
	}
}

// A probe's step takes exactly one action and an observer exactly one
// kind: the schema says one-of, as the loader's validation does, and
// knows every kind of observer's fields.
func TestSchemaOneOf(t *testing.T) {
	s := compile(t)
	const head = "apiVersion: kubeproof.io/v1alpha1\nkind: Claims\ndocument: {file: d.txt, title: t}\nclaims: []\n"
	probe := func(observe, step string) string {
		return head + "probes:\n- id: p\n  description: d\n  observe:\n  - " + observe + "\n  steps:\n  - " + step + "\n"
	}
	const obj = "{name: pod, object: {apiVersion: v1, kind: Pod, name: web, fields: {phase: '{.status.phase}'}}}"
	const apply = "{apply: {manifest: m}}"
	if err := validate(s, []byte(probe(obj, apply))); err != nil {
		t.Fatalf("a valid probe: %v", err)
	}
	for name, file := range map[string]string{
		"two kinds":          probe("{name: pod, events: {kind: Pod, name: web}, etcd: {apiVersion: v1, kind: Pod, name: web}}", apply),
		"no kind":            probe("{name: pod}", apply),
		"unknown kind":       probe("{name: pod, logs: {pod: web}}", apply),
		"unknown kind field": probe("{name: pod, events: {kind: Pod, name: web, since: 1}}", apply),
		"two actions":        probe(obj, "{apply: {manifest: m}, delete: {apiVersion: v1, kind: Pod, name: web}}"),
		"no action":          probe(obj, "{name: nothing}"),
	} {
		if err := validate(s, []byte(file)); err == nil {
			t.Errorf("%s: valid", name)
		}
	}
}
