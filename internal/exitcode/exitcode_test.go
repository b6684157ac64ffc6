package exitcode

import (
	"errors"
	"fmt"
	"testing"
)

func TestCodeSurvivesWrapping(t *testing.T) {
	err := fmt.Errorf("start kubelet: %w", Errorf(Conflict, "port %d taken", 6443))
	if got := Of(err); got != Conflict {
		t.Fatalf("Of(wrapped) = %v, want %v", got, Conflict)
	}
	if err.Error() != "start kubelet: port 6443 taken" {
		t.Fatalf("message changed: %q", err)
	}
}

func TestDefaults(t *testing.T) {
	if Of(nil) != OK {
		t.Fatal("nil must be OK")
	}
	if Of(errors.New("x")) != Internal {
		t.Fatal("an unmarked error must be Internal")
	}
	if With(Usage, nil) != nil {
		t.Fatal("With(nil) must stay nil")
	}
}

// Every code a user may see is distinct: CI tells them apart by number.
func TestCodesAreDistinct(t *testing.T) {
	seen := map[Code]bool{}
	for _, c := range []Code{OK, SpecsFailed, Usage, Permission, Conflict, MissingTool, Kubeconfig, Unreachable, ClusterSetup, Internal, Refuted, Forbidden, Registry, Credentials, Interrupted, Terminated} {
		if seen[c] {
			t.Fatalf("code %d used twice", c)
		}
		seen[c] = true
	}
}

// An unmarked error of a class gets the class's code; a mark wins.
func TestClassify(t *testing.T) {
	target := errors.New("a typed error of another package")
	Classify(target, Registry)
	if got := Of(fmt.Errorf("context: %w", target)); got != Registry {
		t.Errorf("classified: %v", got)
	}
	if got := Of(With(Usage, fmt.Errorf("context: %w", target))); got != Usage {
		t.Errorf("marked: %v", got)
	}
	if got := Of(errors.New("other")); got != Internal {
		t.Errorf("unclassified: %v", got)
	}
}
