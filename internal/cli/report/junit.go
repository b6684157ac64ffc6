package report

import (
	"encoding/xml"
	"fmt"
	"io"

	"github.com/kubeproof/kubeproof/framework/claims"
)

// The JUnit XML that CI systems read (Jenkins' and GitHub's readers take
// this shape): one test case per claim, one suite per document.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
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
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// JUnit writes the claims as JUnit XML: a refuted claim is a failure only
// when refutedFails (--fail-on-refuted), a claim that could not be decided
// here is skipped with the reason, an error is an error; every case says
// its verdict and reason in its output.
func JUnit(w io.Writer, r Report, refutedFails bool) error {
	all := junitSuites{Name: "kubeproof claims"}
	for _, d := range r.Documents {
		s := junitSuite{Name: fmt.Sprintf("%s (%s)", d.Title, d.File), Time: "0"}
		for _, res := range d.Claims {
			c := junitCase{Name: res.Claim.ID + ": " + res.Claim.Statement, Classname: d.File, Time: "0",
				SystemOut: string(res.Verdict) + ": " + res.Reason}
			switch res.Verdict {
			case claims.Refuted:
				if refutedFails {
					c.Failure = &junitProblem{Message: "refuted", Type: "refuted", Text: res.Reason}
					s.Failures++
				}
			case claims.Error:
				c.Error = &junitProblem{Message: "error", Type: "error", Text: res.Reason}
				s.Errors++
			case claims.NotCheckable, claims.NotTestable, claims.NotRun:
				c.Skipped = &junitSkipped{Message: string(res.Verdict) + ": " + res.Reason}
				s.Skipped++
			}
			s.Cases = append(s.Cases, c)
		}
		s.Tests = len(s.Cases)
		all.Tests, all.Failures, all.Errors, all.Skipped = all.Tests+s.Tests, all.Failures+s.Failures, all.Errors+s.Errors, all.Skipped+s.Skipped
		all.Suites = append(all.Suites, s)
	}
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
