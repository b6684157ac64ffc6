package claims

import (
	"strings"
	"testing"
	"testing/fstest"
)

func loadYAML(t *testing.T, body string) *Catalog {
	t.Helper()
	cat, err := Load(fstest.MapFS{"x.yaml": {Data: []byte("document: {file: d.txt, title: t}\n" + body)}})
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

type startEv struct {
	InitialState string `json:"initialState"`
}

// Two claims reading one kind of evidence (one Go type, two names) with one
// expectation read its failure alike, or name the reason they differ.
func TestCheckConsistency(t *testing.T) {
	claim := func(id, evidence, alt string) string {
		s := "{id: " + id + ", section: s, quote: q, statement: s, component: c, kind: behaviour, specs: [informers], expect: [{evidence: " + evidence + ".initialState, equals: list}]"
		if alt != "" {
			s += ", conditional: [{condition: with a watch-list, expect: [{evidence: " + evidence + ".initialState, equals: " + alt + "}]}]"
		}
		return s
	}
	ds := decls("informers", "scheduler", startEv{}, "informers", "relist", startEv{})
	split := loadYAML(t, "claims: ["+claim("A-LIST", "scheduler", "")+"}, "+claim("B-RELIST", "relist", "watch-list")+"}]")
	errs := CheckConsistency(split, ds)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "A-LIST and B-RELIST hold the same fact") {
		t.Fatalf("a refuted and a conditional reading of one fact: %v", errs)
	}
	if !strings.Contains(errs[0].Error(), `(= "list")`) || !strings.Contains(errs[0].Error(), "B-RELIST is conditional when it fails") {
		t.Errorf("the report names the expectation and each reading: %v", errs[0])
	}
	same := loadYAML(t, "claims: ["+claim("A-LIST", "scheduler", "")+"}, "+claim("B-RELIST", "relist", "")+"}]")
	if errs := CheckConsistency(same, ds); len(errs) != 0 {
		t.Errorf("two refuted readings: %v", errs)
	}
	reviewed := loadYAML(t, "claims: ["+claim("A-LIST", "scheduler", "")+", differsFrom: [{claim: B-RELIST, reason: the other says more}]}, "+claim("B-RELIST", "relist", "watch-list")+"}]")
	if errs := CheckConsistency(reviewed, ds); len(errs) != 0 {
		t.Errorf("a reviewed difference: %v", errs)
	}
	// Another kind of evidence (a type of its own) is another fact.
	other := loadYAML(t, "claims: ["+claim("A-LIST", "scheduler", "")+"}, "+claim("B-RELIST", "relist", "watch-list")+"}]")
	if errs := CheckConsistency(other, decls("informers", "scheduler", startEv{}, "informers", "relist", struct {
		InitialState string `json:"initialState"`
	}{})); len(errs) != 0 {
		t.Errorf("unrelated evidence: %v", errs)
	}
}

// A list's other elements are other facts; an alternative that repeats an
// expectation needs it to hold.
func TestStance(t *testing.T) {
	cat := loadYAML(t, `claims:
- {id: A-B, section: s, quote: q, statement: s, component: c, kind: behaviour, specs: [x-y],
   expect: [{evidence: ran, contains: Filter}, {evidence: ran, contains: PostFilter}, {evidence: code, equals: 201}],
   conditional: [{condition: for a Pod that fits, expect: [{evidence: ran, contains: Filter}, {evidence: code, equals: 422}]}]}`)
	c := cat.Claims[0]
	for i, want := range []string{"", "any", "= 422"} {
		if got := strings.Join(Stance(c, c.Expect[i]), ";"); got != want {
			t.Errorf("stance on %s %s: %q, want %q", c.Expect[i].Evidence, c.Expect[i].Want(), got, want)
		}
	}
}

func TestRelationsValidate(t *testing.T) {
	head := "{id: A-B, section: s, quote: q, statement: s, component: c, kind: behaviour, specs: [x-y], expect: [{evidence: e, equals: 1}], "
	bad := map[string]string{
		"differs from nothing":    head + "differsFrom: [{claim: C-D, reason: why}]}",
		"differs without reason":  head + "differsFrom: [{claim: A-B, reason: ''}]}",
		"flip to conditional":     head + "flipsUnder: [{fault: watch-cache-off, verdict: conditional, setting: x}]}",
		"flip without setting":    head + "flipsUnder: [{fault: watch-cache-off, verdict: confirmed}]}",
		"flip, no fault ID":       head + "flipsUnder: [{fault: Watch Cache, verdict: confirmed, setting: x}]}",
		"not testable with flips": "{id: A-B, section: s, quote: q, statement: s, component: c, kind: behaviour, notTestable: why, flipsUnder: [{fault: f-g, verdict: confirmed, setting: x}]}",
	}
	for name, body := range bad {
		if _, err := Load(fstest.MapFS{"x.yaml": {Data: []byte("document: {file: d.txt, title: t}\nclaims: [" + body + "]")}}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	ok := loadYAML(t, "claims: ["+head+"flipsUnder: [{fault: watch-cache-off, verdict: confirmed, setting: kube-apiserver --watch-cache=false}]}]")
	if f := ok.Claims[0].FlipsUnder; len(f) != 1 || f[0].Verdict != FlipsToConfirmed {
		t.Errorf("flipsUnder read as %+v", f)
	}
}

// A condition that restricts the claim to where it held is flagged; one
// that names a flag, a kind of object or of request is not.
func TestCheckConditions(t *testing.T) {
	claim := func(statement, condition string) Claim {
		return Claim{ID: "A-B", Statement: statement, Conditional: []Alternative{{Condition: condition}}}
	}
	flagged := []Claim{
		claim("Without etcd nothing works.", "for what needs etcd now: writes; reads from the cache are served"),
		claim("The scheduler binds every Pod.", "where it holds"),
		claim("The kubelet reports the Pod's status.", "when the kubelet reports the status"),
		claim("Every Pod is stored.", "for the ones that are stored - others are not"),
	}
	for _, c := range flagged {
		if errs := CheckConditions([]Claim{c}); len(errs) != 1 {
			t.Errorf("condition %q of %q not flagged", c.Conditional[0].Condition, c.Statement)
		}
	}
	kept := []Claim{
		claim("Objects are stored as protobuf.", "for built-in types; custom resources are stored as JSON"),
		claim("A request without credentials gets 401.", "with anonymous authentication off (--anonymous-auth=false); with it on, 403"),
		claim("Every new Pod is stored without spec.nodeName.", "for Pods that do not name their node; a Pod created with spec.nodeName is stored bound"),
	}
	for _, c := range kept {
		if errs := CheckConditions([]Claim{c}); len(errs) != 0 {
			t.Errorf("condition %q flagged: %v", c.Conditional[0].Condition, errs)
		}
	}
}
