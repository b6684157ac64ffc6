//go:build !e2e

package suites

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
			seeds[file] = collapse(string(data))
		}
		seed := seeds[file]
		quote := collapse(c.Quote)
		if strings.Contains(seed, quote) {
			if c.Condensed {
				t.Errorf("claim %s: marked condensed, but its quote is verbatim", c.ID)
			}
			continue
		}
		if !c.Condensed {
			t.Errorf("claim %s: quote not found verbatim in %s (mark it condensed and join verbatim fragments with \" … \"): %q", c.ID, file, c.Quote)
			continue
		}
		rest := seed
		for _, frag := range strings.Split(quote, " … ") {
			i := strings.Index(rest, frag)
			if i < 0 {
				t.Errorf("claim %s: condensed quote's fragment %q not found in %s (after the fragments before it)", c.ID, frag, file)
				break
			}
			rest = rest[i+len(frag):]
		}
	}
}

// collapse turns every run of white space into one space.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }
