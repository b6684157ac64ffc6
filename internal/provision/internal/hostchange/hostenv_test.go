package hostchange

import (
	"os"
	"path/filepath"
	"testing"
)

func TestUnescapeMount(t *testing.T) {
	if got := UnescapeMount(`/var/lib/a\040b`); got != "/var/lib/a b" {
		t.Errorf("UnescapeMount = %q", got)
	}
}

func TestSysctlsHolders(t *testing.T) {
	// A read-only key: Release writes only values that changed.
	s := Sysctls{File: filepath.Join(t.TempDir(), "s.json"), Keys: []string{"kernel/ostype"}}
	if err := s.Hold("a"); err != nil {
		t.Fatal(err)
	}
	if err := s.Hold("b"); err != nil {
		t.Fatal(err)
	}
	if err := s.Release("a"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.File); err != nil {
		t.Fatalf("file gone while b still holds: %v", err)
	}
	if err := s.Release("b"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.File); !os.IsNotExist(err) {
		t.Errorf("file left after the last holder: %v", err)
	}
}
