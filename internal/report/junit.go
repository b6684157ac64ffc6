package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"path"
	"strings"

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
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	File      string        `xml:"file,attr,omitempty"`
	Line      int           `xml:"line,attr,omitempty"`
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
	allSpecs := map[string]float64{}
	for _, d := range r.Documents {
		s := junitSuite{Name: fmt.Sprintf("%s (%s)", d.Title, d.File)}
		class := Classname(d)
		docSpecs := map[string]float64{}
		for _, res := range d.Claims {
			c := junitCase{Name: res.Claim.ID + ": " + res.Claim.Statement, Classname: class,
				Time: seconds(specSeconds(res, docSpecs, allSpecs)), SystemOut: string(res.Verdict) + ": " + res.Reason}
			if src := res.Claim.Source; src != nil {
				c.File, c.Line = src.File, src.Line
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
		s.Time = seconds(sum(docSpecs))
		all.Tests, all.Failures, all.Errors, all.Skipped = all.Tests+s.Tests, all.Failures+s.Failures, all.Errors+s.Errors, all.Skipped+s.Skipped
		all.Suites = append(all.Suites, s)
	}
	all.Time = seconds(sum(allSpecs))
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

// Classname is a document's class name in claims-junit.xml: its title, or
// its file name without the extension where the title is empty or has a
// dot (readers split class names at the last dot), dots made dashes.
func Classname(d DocumentResult) string {
	if d.Title != "" && !strings.Contains(d.Title, ".") {
		return d.Title
	}
	return strings.ReplaceAll(strings.TrimSuffix(d.File, path.Ext(d.File)), ".", "-")
}

// specSeconds is how long the specs that decided a claim ran; each spec is
// counted once in the document's and the run's totals.
func specSeconds(res judge.Result, doc, all map[string]float64) float64 {
	total := 0.0
	for _, s := range res.Specs {
		total += s.Seconds
		doc[s.ID], all[s.ID] = s.Seconds, s.Seconds
	}
	return total
}

func sum(m map[string]float64) float64 {
	total := 0.0
	for _, v := range m {
		total += v
	}
	return total
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
