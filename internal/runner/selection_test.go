package runner

import "testing"

// The Pod Security preflight reports on the specs a run selects, as Ginkgo
// selects them: by label filter, then --focus and --skip on their text.
func TestSpecSelection(t *testing.T) {
	spec := struct {
		text   string
		labels []string
	}{"Kubelet admission and isolation seccomp as the Pod asks", []string{"spec:kubelet-seccomp", "claim:004-SECCOMP", "podsecurity:baseline"}}
	for _, c := range []struct {
		filter      string
		focus, skip []string
		want        bool
	}{
		{"", nil, nil, true},
		{"claim:004-SECCOMP", nil, nil, true},
		{"podsecurity:baseline", nil, nil, true},
		{"!podsecurity:baseline", nil, nil, false},
		{"claim:000-X", nil, nil, false},
		{"", []string{"as the Pod"}, nil, true},
		{"", []string{"etcd"}, nil, false},
		{"", nil, []string{"seccomp as"}, false},
		{"claim:004-SECCOMP", []string{"Kubelet"}, []string{"etcd"}, true},
	} {
		sel, err := NewSelection(c.filter, c.focus, c.skip)
		if err != nil {
			t.Fatal(err)
		}
		if got := sel.matches(spec.text, spec.labels); got != c.want {
			t.Errorf("filter %q focus %q skip %q: selected %t, want %t", c.filter, c.focus, c.skip, got, c.want)
		}
	}
	if _, err := NewSelection("", []string{"("}, nil); err == nil {
		t.Error("a bad --focus expression is accepted")
	}
}
