package judge

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/claims/expect"
	"github.com/kubeproof/kubeproof/contract/cluster"
)

// readingClaim reads the audit log, or the Pod's field managers where the
// cluster has no audit log.
func readingClaim(refutes bool) claims.Claim {
	eq := func(v string) *json.RawMessage { r := json.RawMessage(v); return &r }
	return claims.Claim{ID: "X-STATUS", Kind: claims.Behaviour, Specs: []string{"spec-a"},
		Requires: []cluster.Capability{cluster.AuditLog},
		Expect:   []expect.Expectation{{Evidence: "statusWrites.byKubelet", Equals: eq("true")}},
		Readings: []claims.Reading{{Name: "api", Sees: "the field manager of the Pod's status, a client's name",
			Expect:  []expect.Expectation{{Evidence: "fieldManagers.statusBy", Contains: eq(`"kubelet"`)}},
			Refutes: refutes}},
	}
}

// A claim whose own reading needs a capability the cluster lacks is
// confirmed by a reading the API gives, which the result names; a reading
// that does not hold refutes nothing unless it observes the fact at the
// sentence's strength (Refutes), when it refutes; with the capability, the
// claim's own reading decides, whatever the other says.
func TestReadings(t *testing.T) {
	spec := func(ev string) map[string]SpecResult {
		var m map[string]any
		if err := json.Unmarshal([]byte(ev), &m); err != nil {
			t.Fatal(err)
		}
		return map[string]SpecResult{"spec-a": {ID: "spec-a", State: "passed", Evidence: m}}
	}
	for _, tc := range []struct {
		name        string
		refutes     bool
		info        *cluster.Info
		evidence    string
		want        Verdict
		wantReading string
		says        string
	}{
		{"the API reading confirms", false, info(), `{"fieldManagers":{"statusBy":["kubelet"]}}`, Confirmed, "api", "by its reading api, as the cluster lacks AuditLog"},
		{"a reading that does not hold refutes nothing", false, info(), `{"fieldManagers":{"statusBy":["k3s"]}}`, NotCheckable, "", "its reading api (the field manager of the Pod's status, a client's name) did not confirm it"},
		{"a reading that does not hold names what the reading wants, not the document", false, info(), `{"fieldManagers":{"statusBy":["k3s"]}}`, NotCheckable, "", `fieldManagers.statusBy = ["k3s"] where the reading wants contains "kubelet"`},
		{"the claim's own reading where the cluster has it", false, info(cluster.AuditLog), `{"statusWrites":{"byKubelet":false},"fieldManagers":{"statusBy":["kubelet"]}}`, Refuted, "", "statusWrites.byKubelet = false"},
		{"a reading's evidence missing is a harness bug", false, info(), `{}`, Error, "api", "fieldManagers.statusBy"},
		{"a reading that observes the fact confirms", true, info(), `{"fieldManagers":{"statusBy":["kubelet"]}}`, Confirmed, "api", "by its reading api, as the cluster lacks AuditLog"},
		{"a reading that observes the fact refutes, naming itself", true, info(), `{"fieldManagers":{"statusBy":["k3s"]}}`, Refuted, "api", `by its reading api, as the cluster lacks AuditLog (the field manager of the Pod's status, a client's name): `},
		{"a refuting reading says what it saw", true, info(), `{"fieldManagers":{"statusBy":["k3s"]}}`, Refuted, "api", `["k3s"]`},
		{"with the capability the claim's own reading decides, not a refuting one", true, info(cluster.AuditLog), `{"statusWrites":{"byKubelet":true},"fieldManagers":{"statusBy":["k3s"]}}`, Confirmed, "", "statusWrites.byKubelet = true"},
	} {
		c := readingClaim(tc.refutes)
		r := Claims([]claims.Claim{c}, spec(tc.evidence), tc.info)[0]
		if r.Verdict != tc.want || r.Reading != tc.wantReading || !strings.Contains(r.Reason, tc.says) {
			t.Errorf("%s: %s by reading %q: %s; want %s by %q, saying %q", tc.name, r.Verdict, r.Reading, r.Reason, tc.want, tc.wantReading, tc.says)
		}
		if r.Claim.ID != c.ID || len(r.Claim.Readings) != 1 {
			t.Errorf("%s: the result's claim is not the claim as written: %+v", tc.name, r.Claim)
		}
	}
}
