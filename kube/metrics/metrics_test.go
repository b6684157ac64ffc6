package metrics

import "testing"

func TestParseAndSum(t *testing.T) {
	text := []byte(`# HELP etcd_requests_total Etcd request counts for each operation and object type.
# TYPE etcd_requests_total counter
etcd_requests_total{group="",operation="get",resource="podtemplates"} 3
etcd_requests_total{group="",operation="update",resource="podtemplates"} 2
etcd_requests_total{group="apps",operation="get",resource="deployments"} 7
weird_label{a="x\"y,z}",b="2"} 1.5e1
no_labels 4
broken{a="1" 
`)
	ss := Parse(text)
	if len(ss) != 5 {
		t.Fatalf("parsed %d samples, want 5: %+v", len(ss), ss)
	}
	if got := ss.Sum("etcd_requests_total", map[string]string{"resource": "podtemplates"}); got != 5 {
		t.Errorf("sum over podtemplates = %v, want 5", got)
	}
	if got := ss.Sum("etcd_requests_total", map[string]string{"operation": "get", "group": ""}); got != 3 {
		t.Errorf("sum of core gets = %v, want 3", got)
	}
	if got := ss.Sum("weird_label", map[string]string{"a": `x"y,z}`}); got != 15 {
		t.Errorf("escaped label: sum = %v, want 15", got)
	}
	if got := ss.Sum("no_labels", nil); got != 4 {
		t.Errorf("no labels: sum = %v, want 4", got)
	}
}
