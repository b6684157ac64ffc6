package exitcode

import (
	"errors"
	"fmt"
	"os"
	"strings"
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
	names := map[string]bool{}
	for _, e := range Table {
		if seen[e.Code] || names[e.Name] {
			t.Fatalf("code %d (%s) used twice", e.Code, e.Name)
		}
		seen[e.Code], names[e.Name] = true, true
	}
	for _, c := range []Code{OK, SpecsFailed, Usage, Permission, Conflict, MissingTool, Kubeconfig, Unreachable, ClusterSetup, Internal, Refuted, Forbidden, Registry, ClaimsErrored, LintFindings, Credentials, Interrupted, Terminated} {
		if !seen[c] {
			t.Errorf("code %d is not in Table", c)
		}
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

// The tables of the documents are Table, as Markdown renders it: one
// source for the help, README.md and docs/ci.md.
func TestDocumentsCarryTheTable(t *testing.T) {
	want := Markdown()
	for _, doc := range []string{"../../README.md", "../../docs/ci.md"} {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		i := strings.Index(text, "| code | meaning |\n")
		if i < 0 {
			t.Errorf("%s has no exit code table (| code | meaning |)", doc)
			continue
		}
		got := text[i:]
		if j := strings.Index(got, "\n\n"); j >= 0 {
			got = got[:j+1]
		}
		if got != want {
			t.Errorf("%s's exit code table is not exitcode.Table; want:\n%s\ngot:\n%s", doc, want, got)
		}
	}
}
