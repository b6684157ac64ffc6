package hostchange

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A module that is there is not loaded again, nor unloaded by the last
// holder; one that cannot be loaded is named, and no holder is recorded.
func TestModulesHoldOnlyWhatWasMissing(t *testing.T) {
	dir := t.TempDir()
	present := filepath.Join(dir, "present")
	if err := os.WriteFile(present, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	m := Modules{File: filepath.Join(dir, "saved.json"), Modules: []Module{{Name: "kubeproof_no_such_module", Present: present}}}
	if err := m.Hold("a"); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(m.File)
	if err != nil || strings.Contains(string(data), "kubeproof_no_such_module") {
		t.Fatalf("saved %q (%v): a present module was recorded as loaded", data, err)
	}
	if err := m.Release("a"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(m.File); !os.IsNotExist(err) {
		t.Errorf("the last holder left %s", m.File)
	}

	missing := Modules{File: filepath.Join(dir, "saved2.json"), Modules: []Module{{Name: "kubeproof_no_such_module", Present: filepath.Join(dir, "absent")}}}
	err = missing.Hold("a")
	if err == nil || !strings.Contains(err.Error(), "kubeproof_no_such_module") {
		t.Fatalf("error %v, want one naming the module", err)
	}
	if _, err := os.Stat(missing.File); !os.IsNotExist(err) {
		t.Errorf("a failed hold left a holder in %s", missing.File)
	}
}
