package dockerd

import (
	"os"
	"path/filepath"
	"testing"
)

// A data root with containers in it is what a daemon that died leaves:
// Start removes them, and kind's Down starts the daemon to do so.
func TestLeftovers(t *testing.T) {
	cache := t.TempDir()
	if n := Leftovers(cache); n != 0 {
		t.Fatalf("no data root: Leftovers = %d, want 0", n)
	}
	for _, id := range []string{"a36e52f1", "ba96b7ea"} {
		if err := os.MkdirAll(filepath.Join(DataRoot(cache), "containers", id), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if n := Leftovers(cache); n != 2 {
		t.Fatalf("two container directories: Leftovers = %d, want 2", n)
	}
}
