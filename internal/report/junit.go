package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/internal/judge"
)

// The JUnit XML that CI systems read (the readers of GitHub Actions, GitLab
// and Jenkins take this shape): one test case per claim, one suite per
// document. What readers do with it decides its details:
//   - classname has no dot: readers that split a classname at its last dot
//     (into a package and a class) would otherwise show a file's extension;
//   - file and line point at the claim in its claims file, where
//     annotations go;
//   - a failure's message is the verdict's reason, since readers show the
//     message and seldom the body (and never a passing case's output);
//   - time is the seconds of the specs that decided the claim.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name       string           `xml:"name,attr"`
	Classname  string           `xml:"classname,attr"`
	File       string           `xml:"file,attr,omitempty"`
	Line       int              `xml:"line,attr,omitempty"`
	Time       string           `xml:"time,attr"`
	Properties *junitProperties `xml:"properties,omitempty"`
	Failure    *junitProblem    `xml:"failure,omitempty"`
	Error      *junitProblem    `xml:"error,omitempty"`
	Skipped    *junitSkipped    `xml:"skipped,omitempty"`
	SystemOut  string           `xml:"system-out,omitempty"`
}

type junitProperties struct {
	Property []junitProperty `xml:"property"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// JUnitRefuted is what claims-junit.xml makes of a refuted claim
// (--junit-refuted-as).
type JUnitRefuted string

const (
	// RefutedFailure (the default): a failure whose message says what the
	// cluster did instead.
	RefutedFailure JUnitRefuted = "failure"
	// RefutedPassed: a passing case whose output says it was refuted (the
	// run did what it should: it found what the cluster does).
	RefutedPassed JUnitRefuted = "passed"
)

// JUnit writes the claims as JUnit XML: a refuted claim is a failure when
// refutedFails (--junit-refuted-as failure), a claim that could not be decided here is skipped with
// the reason, an error is an error; every case says its verdict and reason
// in its output.
func JUnit(w io.Writer, r Report, refutedFails bool) error {
	all := junitSuites{Name: "kubeproof claims"}
	share := claimShares(r)
	total := 0.0
	for _, d := range r.Documents {
		s := junitSuite{Name: fmt.Sprintf("%s (%s)", d.Title, d.File)}
		class := Classname(d)
		docTime := 0.0
		for _, res := range d.Claims {
			t := share(res)
			docTime += t
			c := junitCase{Name: CaseName(res.Claim), Classname: class, Time: seconds(t),
				Properties: &junitProperties{Property: []junitProperty{
					{"claim", res.Claim.ID}, {"verdict", string(res.Verdict)}, {"statement", res.Claim.Statement}, {"quote", res.Claim.Quote},
				}},
				SystemOut: string(res.Verdict) + ": " + res.Reason + "\nstatement: " + res.Claim.Statement}
			if src := res.Claim.Source; src != nil {
				if file, ok := RepositoryPath(src.File); ok {
					c.File, c.Line = file, src.Line
				}
			}
			switch res.Verdict {
			case judge.Refuted:
				if refutedFails {
					c.Failure = &junitProblem{Message: res.Reason, Type: string(judge.Refuted), Text: problemText(d, res)}
					s.Failures++
				}
			case judge.Error:
				c.Error = &junitProblem{Message: res.Reason, Type: string(judge.Error), Text: problemText(d, res)}
				s.Errors++
			case judge.NotCheckable, judge.NotTestable, judge.Open, judge.NotRun:
				c.Skipped = &junitSkipped{Message: string(res.Verdict) + ": " + res.Reason}
				s.Skipped++
			}
			s.Cases = append(s.Cases, c)
		}
		s.Tests = len(s.Cases)
		s.Time = seconds(docTime)
		total += docTime
		all.Tests, all.Failures, all.Errors, all.Skipped = all.Tests+s.Tests, all.Failures+s.Failures, all.Errors+s.Errors, all.Skipped+s.Skipped
		all.Suites = append(all.Suites, s)
	}
	all.Time = seconds(total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(all); err != nil {
		return fmt.Errorf("encode claims-junit.xml: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// CaseName is a claim's test name in claims-junit.xml: its ID, and its
// title when it has one. Never the statement: a reworded statement must
// not start a new test history.
func CaseName(c claims.Claim) string {
	if c.Title != "" {
		return c.ID + ": " + c.Title
	}
	return c.ID
}

// claimShares returns each claim's time: every spec's share of the run's
// wall time (wallShares), split evenly among the claims it decided, so
// that each spec is counted once and the claims add up to the time specs
// were running. A spec without a start and end (a report of an older
// release) counts its own seconds.
func claimShares(r Report) func(judge.Result) float64 {
	spans := map[string]span{}
	for _, s := range r.Specs {
		if !s.StartedAt.IsZero() && s.EndedAt.After(s.StartedAt) {
			spans[s.ID] = span{s.StartedAt, s.EndedAt}
		}
	}
	shares := wallShares(spans)
	deciders := map[string]int{}
	for _, d := range r.Documents {
		for _, res := range d.Claims {
			for _, s := range res.Specs {
				deciders[s.ID]++
			}
		}
	}
	return func(res judge.Result) float64 {
		t := 0.0
		for _, s := range res.Specs {
			own, ok := shares[s.ID]
			if !ok {
				own = s.Seconds
			}
			t += own / float64(deciders[s.ID])
		}
		return t
	}
}

// Classname is a document's class name in claims-junit.xml: its title, or
// its file name without the extension where the title is empty or has a
// dot (readers split class names at the last dot), dots made dashes.
func Classname(d DocumentResult) string {
	if d.Title != "" && !strings.Contains(d.Title, ".") {
		return d.Title
	}
	return strings.ReplaceAll(strings.TrimSuffix(d.File, path.Ext(d.File)), ".", "-")
}

func seconds(s float64) string { return fmt.Sprintf("%.3f", s) }

// problemText is the body of a failure or error: what the document says,
// what was observed, and which specs looked.
func problemText(d DocumentResult, res judge.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", res.Verdict, res.Reason)
	fmt.Fprintf(&b, "document: %s (%s), section %q\n", d.Title, d.File, res.Claim.Section)
	fmt.Fprintf(&b, "quote: %s\n", res.Claim.Quote)
	fmt.Fprintf(&b, "statement: %s\n", res.Claim.Statement)
	if len(res.Observations) > 0 {
		b.WriteString("observed:\n")
		for _, o := range res.Observations {
			fmt.Fprintf(&b, "  %s\n", o)
		}
	}
	for _, s := range res.Specs {
		fmt.Fprintf(&b, "spec %s: %s in %.1f s", s.ID, s.State, s.Seconds)
		if s.Message != "" {
			fmt.Fprintf(&b, ": %s", s.Message)
		}
		b.WriteString("\n")
	}
	if src := res.Claim.Source; src != nil {
		fmt.Fprintf(&b, "claim: %s:%d\n", src.File, src.Line)
	}
	return b.String()
}
