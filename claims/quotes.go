package claims

import (
	"fmt"
	"strings"
)

// CheckQuote reports whether a claim's quote stands in text, the document
// named doc: verbatim, white space aside (a quote may join the lines of a
// list or a diagram), or, when condensed, as fragments joined by " … "
// that each stand verbatim in text, in order. It is the one check of
// quotes: the built-in catalog's against its seeds (go test ./suites) and
// a user's against their document (claims lint --document).
func CheckQuote(text, doc string, c Claim) error {
	text, quote := Collapse(text), Collapse(c.Quote)
	if strings.Contains(text, quote) {
		if c.Condensed {
			return fmt.Errorf("claim %s: marked condensed, but its quote stands verbatim in %s", c.ID, doc)
		}
		return nil
	}
	if !c.Condensed {
		hint := ""
		if strings.Contains(quote, " … ") {
			hint = " (it joins fragments with \" … \": mark it condensed)"
		}
		return fmt.Errorf("claim %s: quote not found in %s: «%s»%s", c.ID, doc, first(c.Quote, 60), hint)
	}
	rest := text
	for _, frag := range strings.Split(quote, " … ") {
		i := strings.Index(rest, frag)
		if i < 0 {
			return fmt.Errorf("claim %s: quote not found in %s: the condensed quote's fragment «%s» is not there (after the fragments before it)", c.ID, doc, first(frag, 60))
		}
		rest = rest[i+len(frag):]
	}
	return nil
}

// Collapse turns every run of white space into one space.
func Collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// first is s cut to n runes, with "…" where it was cut.
func first(s string, n int) string {
	s = Collapse(s)
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
