package record

import (
	"encoding/json"
	"testing"
)

// A record reads as one line in a verbose run or beside a failure: what
// kind it is and what it holds, never Go syntax.
func TestRecordString(t *testing.T) {
	unmet := &Unmet{Component: "kube-scheduler", What: "the Pod was bound", Detail: "Pending after 30s"}
	for _, c := range []struct {
		r    Record
		want string
	}{
		{Record{Kind: EvidenceRecord, Name: "bound", Value: map[string]any{"node": "n1"}}, `evidence bound: {"node":"n1"}`},
		{Record{Kind: EvidenceRecord, Name: "odd", Value: make(chan int)}, "evidence odd: "},
		{Record{Kind: UnobservableRecord, Name: "etcd", Reason: "no etcd access"}, "unobservable etcd: no etcd access"},
		{Record{Kind: ComponentRecord, Component: &ComponentNote{Component: "kubelet", Saw: false, What: "a restart"}}, "component kubelet: saw false: a restart"},
		{Record{Kind: UnmetRecord, Unmet: unmet}, "precondition not met: the Pod was bound did not happen (kube-scheduler): Pending after 30s"},
		{Record{Kind: DumpRecord, Dump: "failures/x.yaml"}, "namespace dump: failures/x.yaml"},
		{Record{Kind: ComponentRecord}, "component"},
	} {
		got := c.r.String()
		if c.r.Name == "odd" {
			// A value that does not encode is shown as Go prints it.
			if len(got) <= len(c.want) || got[:len(c.want)] != c.want {
				t.Errorf("%+v: %q", c.r, got)
			}
			continue
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.r.Kind, got, c.want)
		}
	}
	if got := unmet.Missing(); got != "the Pod was bound did not happen (kube-scheduler): Pending after 30s" {
		t.Errorf("Missing: %q", got)
	}
}

// The wire: a record survives JSON as the judge decodes it, empty fields
// left out.
func TestRecordJSON(t *testing.T) {
	in := Record{Kind: UnmetRecord, Unmet: &Unmet{Component: "c", What: "w", Detail: "d"}, Attempt: 2}
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(data); got != `{"kind":"unmet","unmet":{"component":"c","what":"w","detail":"d"},"attempt":2}` {
		t.Errorf("encoded %s", got)
	}
	var out Record
	if err := json.Unmarshal(data, &out); err != nil || out.Unmet == nil || *out.Unmet != *in.Unmet || out.Attempt != 2 {
		t.Errorf("decoded %+v, %v", out, err)
	}
}
