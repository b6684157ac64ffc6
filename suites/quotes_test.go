//go:build !e2e

package suites

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kubeproof/kubeproof/claims"
)

// Every claim quotes its seed: verbatim (whitespace aside: a quote may join
// the lines of a list or a diagram), or, marked condensed, as fragments
// joined by " … " that each stand verbatim in the seed, in order.
func TestQuotesAreInTheirSeeds(t *testing.T) {
	cat := ownCatalog(t)
	seeds := map[string]string{}
	for _, c := range cat.Claims {
		file := c.Document
		if _, ok := seeds[file]; !ok {
			data, err := os.ReadFile(filepath.Join("..", "fixtures", "seeds", file))
			if err != nil {
				t.Fatalf("seed of claim %s: %v", c.ID, err)
			}
			seeds[file] = string(data)
		}
		if err := claims.CheckQuote(seeds[file], file, c); err != nil {
			t.Error(err)
		}
	}
}
