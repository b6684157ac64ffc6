package hygiene

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// maxArchive is the largest compressed file the repository keeps: test data
// (a real run's report, an audit log) is a few hundred KiB at most; a
// release archive or an image is megabytes.
const maxArchive = 1 << 20

// magic are the first bytes of the build outputs a repository must not
// carry.
var magic = []struct {
	name   string
	prefix []byte
	always bool // refused at any size
}{
	{"an ELF executable", []byte("\x7fELF"), true},
	{"a Mach-O executable", []byte("\xcf\xfa\xed\xfe"), true},
	{"a Windows executable", []byte("MZ"), true},
	{"a gzip archive", []byte("\x1f\x8b"), false},
	{"a zip archive", []byte("PK\x03\x04"), false},
	{"an xz archive", []byte("\xfd7zXZ\x00"), false},
	{"a zstd archive", []byte("\x28\xb5\x2f\xfd"), false},
}

func TestNoBuildOutputIsTracked(t *testing.T) {
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err) // a source archive has no index to check
	}
	root := strings.TrimSpace(string(top))
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Fatal(err)
	}
	files := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	if len(files) < 100 {
		t.Fatalf("git ls-files found only %d files", len(files))
	}
	for _, f := range files {
		p := filepath.Join(root, f)
		st, err := os.Lstat(p)
		if err != nil || !st.Mode().IsRegular() {
			continue // deleted in the work tree, or a link
		}
		fh, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		head := make([]byte, 8)
		n, _ := fh.Read(head)
		fh.Close()
		for _, m := range magic {
			if !bytes.HasPrefix(head[:n], m.prefix) {
				continue
			}
			if m.always || st.Size() > maxArchive {
				t.Errorf("%s is %s (%d bytes): a build output; remove it from git (git rm --cached) and let the Makefile make it under _output/", f, m.name, st.Size())
			}
		}
	}
}
