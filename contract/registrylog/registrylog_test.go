package registrylog

import (
	"os"
	"path/filepath"
	"testing"
)

// A line the registry is still writing is not read, and is read whole
// from the offset Read returned once it is complete.
func TestReadPartialLine(t *testing.T) {
	file := filepath.Join(t.TempDir(), "access.jsonl")
	whole := `{"start":"2026-11-27T10:00:00Z","seconds":0.5,"remote":"10.250.0.2:1","method":"GET","path":"/v2/kubeproof/fresh/blobs/sha256:ab","status":200,"bytes":7}` + "\n"
	next := `{"start":"2026-11-27T10:00:01Z","seconds":0.1,"remote":"10.250.0.2:2","method":"HEAD","path":"/v2/kubeproof/fresh/manifests/t1","status":200,"bytes":0}` + "\n"
	if err := os.WriteFile(file, []byte(whole+next[:20]), 0o644); err != nil {
		t.Fatal(err)
	}
	reqs, at, err := Read(file, 0)
	if err != nil || len(reqs) != 1 || at != int64(len(whole)) {
		t.Fatalf("Read = %+v, %d, %v", reqs, at, err)
	}
	r := reqs[0]
	if r.Kind() != "blob" || r.Reference() != "sha256:ab" || r.Bytes != 7 || r.End().Sub(r.Start).Seconds() != 0.5 {
		t.Errorf("request %+v: kind %s, reference %s", r, r.Kind(), r.Reference())
	}
	if err := os.WriteFile(file, []byte(whole+next), 0o644); err != nil {
		t.Fatal(err)
	}
	reqs, _, err = Read(file, at)
	if err != nil || len(reqs) != 1 || reqs[0].Kind() != "manifest" || reqs[0].Reference() != "t1" {
		t.Fatalf("the completed line: %+v, %v", reqs, err)
	}
	for path, kind := range map[string]string{"/v2/": "version", "/v2/x/blobs/uploads/abc": "upload", "/v2/_catalog": "other"} {
		if k := (Request{Path: path}).Kind(); k != kind {
			t.Errorf("Kind(%s) = %s, want %s", path, k, kind)
		}
	}
}
