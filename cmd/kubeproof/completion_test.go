package main

import (
	"slices"
	"testing"
)

// Flags complete from the catalog and the registry; a comma-separated list
// completes its last item.
func TestCompletions(t *testing.T) {
	root := newRootCommand()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--claims", "004-CRI-G"}, "004-CRI-GRPC"},
		{[]string{"run", "--claims", "004-CRI-GRPC,002-RAFT"}, "004-CRI-GRPC,002-RAFT-MAJORITY"},
		{[]string{"run", "--label-filter", "spec:kubelet-cr"}, "spec:kubelet-cri"},
		{[]string{"up", "--provider", "ki"}, "kind"},
		{[]string{"report", "--junit-refuted-as", "pa"}, "passed"},
		{[]string{"status", "--output", "js"}, "json"},
	} {
		cmd, _, err := root.Find(tc.args[:1])
		if err != nil {
			t.Fatal(err)
		}
		flag := tc.args[1][2:]
		fn, ok := cmd.GetFlagCompletionFunc(flag)
		if !ok {
			t.Fatalf("%s --%s: no completion", tc.args[0], flag)
		}
		got, _ := fn(cmd, nil, tc.args[2])
		if !slices.Contains(got, tc.want) {
			t.Errorf("%v: %v, want %s among them", tc.args, got, tc.want)
		}
	}
}
