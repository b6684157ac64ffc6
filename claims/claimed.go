package claims

import "github.com/kubeproof/kubeproof/claims/expect"

// WithClaimedRanges returns the claim with the range of each withinClaimed
// expectation (its own and its alternatives') set as atLeast/atMost from
// claimed, so that the judge holds it exactly as a range written by hand.
// The claim itself is not changed. A claimed that does not parse leaves
// the range unset (Validate refuses such a claim before any judge).
func (c Claim) WithClaimedRanges() Claim {
	if !c.usesClaimed() {
		return c
	}
	r, err := expect.ParseClaimed(c.Claimed)
	if err != nil {
		return c
	}
	c.Expect = expect.WithRange(c.Expect, r)
	if c.Conditional != nil {
		alts := make([]Alternative, len(c.Conditional))
		for i, alt := range c.Conditional {
			alt.Expect = expect.WithRange(alt.Expect, r)
			alts[i] = alt
		}
		c.Conditional = alts
	}
	return c
}

// usesClaimed says the claim has a withinClaimed expectation.
func (c Claim) usesClaimed() bool {
	for _, e := range c.Expect {
		if e.WithinClaimed {
			return true
		}
	}
	for _, alt := range c.Conditional {
		for _, e := range alt.Expect {
			if e.WithinClaimed {
				return true
			}
		}
	}
	return false
}
