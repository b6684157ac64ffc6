package claims

import (
	"fmt"
	"regexp"
	"strings"
)

// A conditional verdict names a real condition under which the sentence
// holds as written (a flag, a kind of object, a kind of request), with
// evidence on both sides. "For what needs etcd now" is no such condition:
// every sentence holds where it holds. CheckConditions flags conditions
// that only restrict the claim to where it held: a phrase of that form, or
// a condition whose words are all the statement's own.

// restating are phrases that restrict a claim to where it holds.
var restating = regexp.MustCompile(`(?i)\b(where|when|whenever|if|in so far as|insofar as) (it|this|that|the sentence|the claim) (holds|is true|applies|works)\b` +
	`|\bfor (what|whatever|those|the ones|the parts?|the cases?) (that |which |where |it )?(needs?|holds?|works?|applies|is true|fails?)\b` +
	`|\bin the cases? (where|in which|that) (it|this) (holds|applies)\b`)

// conditionWord splits a condition into words (a flag stays one word).
var conditionWord = regexp.MustCompile(`[\p{L}\p{N}][\p{L}\p{N}._=/-]*`)

// plainWords are words that name no condition of their own.
var plainWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the for with without when where while whenever if unless only
		what whatever which that those these this it its is are be being been was were of in on at by to from
		as and or not no nor but so than then there their them they one ones part parts case cases
		need needs needed now here all any every each some such do does done holds hold applies apply work works`) {
		plainWords[w] = true
	}
}

// CheckConditions reports the conditional alternatives of cs whose
// condition restates the claim instead of naming a condition.
func CheckConditions(cs []Claim) []error {
	var errs []error
	for _, c := range cs {
		for _, alt := range c.Conditional {
			if why := restates(c, alt.Condition); why != "" {
				errs = append(errs, fmt.Errorf("%sclaim %s: condition %q %s: name a real condition (a flag, a kind of object or request) under which the sentence holds as written, or let the claim be refuted with the condition in its note",
					at(c.Source), c.ID, alt.Condition, why))
			}
		}
	}
	return errs
}

// restates says how condition restates claim c ("" when it names a
// condition of its own).
func restates(c Claim, condition string) string {
	if m := restating.FindString(condition); m != "" {
		return fmt.Sprintf("restricts the claim to where it holds (%q)", m)
	}
	head := conditionHead(condition)
	own := map[string]bool{}
	for _, w := range words(c.Statement) {
		own[w] = true
	}
	var named []string
	for _, w := range words(head) {
		if plainWords[w] {
			continue
		}
		if !own[w] {
			return ""
		}
		named = append(named, w)
	}
	if len(named) == 0 {
		return "names nothing"
	}
	return fmt.Sprintf("names only what the statement does (%s)", strings.Join(named, ", "))
}

// words are the lower-case words of s, without the punctuation that ends
// a sentence or a clause.
func words(s string) []string {
	var out []string
	for _, w := range conditionWord.FindAllString(strings.ToLower(s), -1) {
		out = append(out, strings.TrimRight(w, "._-/"))
	}
	return out
}

// conditionHead is the condition itself, before what follows it (after
// ":", ";" or " - ": what happens otherwise).
func conditionHead(condition string) string {
	end := len(condition)
	for _, sep := range []string{":", ";", " - "} {
		if i := strings.Index(condition, sep); i >= 0 && i < end {
			end = i
		}
	}
	return condition[:end]
}
