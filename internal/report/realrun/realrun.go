// Package realrun reads the report of a real local run that the report and
// judge tests are checked against (internal/report/testdata/local-run,
// README there), so that every test reads the same run the same way, and
// unpacks the gzipped files other tests keep of real runs (Gunzip).
package realrun

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Path is the run's claims.json (gzipped), found from this file's place in
// the source tree so that tests of any package can read it.
func Path() string {
	_, self, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(self), "..", "testdata", "local-run", "claims.json.gz")
}

// Decode decodes the run's claims.json into v, failing t when it cannot.
func Decode(t testing.TB, v any) {
	t.Helper()
	f, err := os.Open(Path())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.NewDecoder(zr).Decode(v); err != nil {
		t.Fatalf("decode %s: %v", Path(), err)
	}
}

// Gunzip writes the gzipped file src, unpacked, to dst: kept runs and logs
// are stored gzipped, and the code under test reads plain files.
func Gunzip(t testing.TB, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	zr, err := gzip.NewReader(in)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, zr); err != nil {
		t.Fatalf("unpack %s: %v", src, err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
