package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/kubeproof/kubeproof/internal/exitcode"
)

// writeClaimsJSON writes a claims.json whose claims came from the files
// sources, one claim each.
func writeClaimsJSON(t *testing.T, sources ...string) string {
	t.Helper()
	dir := t.TempDir()
	claims := ""
	for i, s := range sources {
		if i > 0 {
			claims += ","
		}
		claims += fmt.Sprintf(`{"claim":{"id":"C%d","source":{"file":%q,"line":3}},"verdict":"error"}`, i, s)
	}
	data := `{"documents":[{"file":"doc.md","claims":[` + claims + `]}]}`
	if err := os.WriteFile(filepath.Join(dir, "claims.json"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestReportJudgesAgainWithTheRunsClaimsFile(t *testing.T) {
	own := filepath.Join(t.TempDir(), "mine.yaml")
	if err := os.WriteFile(own, []byte("claims: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		sources []string
		want    string
		code    exitcode.Code
	}{
		{"the catalog's claims", []string{"fixtures/claims/000_a.yaml", "fixtures/claims/004_b.yaml"}, "", 0},
		{"a claims file", []string{own, own}, own, 0},
		{"a claims file that is gone", []string{filepath.Join(t.TempDir(), "gone.yaml")}, "", exitcode.Usage},
		{"two claims files", []string{own, "fixtures/claims/000_a.yaml", "other.yaml"}, "", exitcode.Usage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := runClaimsFile(writeClaimsJSON(t, tc.sources...))
			if got != tc.want || exitcode.Of(err) != tc.code {
				t.Errorf("runClaimsFile = %q, %v (exit %d); want %q, exit %d", got, err, exitcode.Of(err), tc.want, tc.code)
			}
		})
	}
	if got, err := runClaimsFile(t.TempDir()); got != "" || err != nil {
		t.Errorf("no claims.json: %q, %v; want the catalog", got, err)
	}
}
