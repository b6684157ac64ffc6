package report

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"

	"github.com/onsi/ginkgo/v2/reporters"
	"github.com/onsi/ginkgo/v2/types"
)

// specsJUnitConfig is Ginkgo's JUnit report as CI readers keep it: a test's
// name is its spec's text alone (no labels, which name every claim the spec
// checks and change whenever a claim is added, nor the node type), and a
// passed spec carries no timeline (its evidence is in the properties).
var specsJUnitConfig = reporters.JunitReportConfig{
	OmitSpecLabels:                     true,
	OmitLeafNodeType:                   true,
	OmitSpecSemVerConstraints:          true,
	OmitSpecComponentSemVerConstraints: true,
	OmitTimelinesForSpecState:          types.SpecStatePassed,
}

// specsJUnitSuites is Ginkgo's JUnit document with a skipped count at the
// top as well (Ginkgo writes only "disabled" there, skipped and pending
// together, and readers that sum the top look for "skipped").
type specsJUnitSuites struct {
	XMLName    xml.Name                   `xml:"testsuites"`
	Tests      int                        `xml:"tests,attr"`
	Disabled   int                        `xml:"disabled,attr"`
	Errors     int                        `xml:"errors,attr"`
	Failures   int                        `xml:"failures,attr"`
	Skipped    int                        `xml:"skipped,attr"`
	Time       float64                    `xml:"time,attr"`
	TestSuites []reporters.JUnitTestSuite `xml:"testsuite"`
}

// SpecsJUnit writes junit.xml, one test case per spec, from the run's
// Ginkgo JSON report (specs.json) with Ginkgo's own JUnit reporter, made
// fit for CI readers, which key a test's history on its name and show the
// first of equal names:
//   - names are the specs' texts (specsJUnitConfig);
//   - suite nodes appear once (each parallel process reports its own
//     SynchronizedBeforeSuite and AfterSuite), named by their node type: a
//     failed one is the one kept;
//   - specs the selection left out (skipped without a reason: they did not
//     run) are not listed, as claims.json does not list them;
//   - no path of the machine that ran it (Ginkgo's package attribute);
//   - the counts are those of the cases (Ginkgo counts an aborted spec, which
//     it writes as a failure, among the errors).
func SpecsJUnit(specsJSON, dst string) error {
	data, err := os.ReadFile(specsJSON)
	if err != nil {
		return fmt.Errorf("junit.xml: %w", err)
	}
	var reports []types.Report
	if err := json.Unmarshal(data, &reports); err != nil {
		return fmt.Errorf("junit.xml: read %s: %w", specsJSON, err)
	}
	out := specsJUnitSuites{}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".junit-*.xml")
	if err != nil {
		return fmt.Errorf("junit.xml: %w", err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	for _, r := range reports {
		shares := specShares(r)
		r, kept := forReaders(r)
		if err := reporters.GenerateJUnitReportWithConfig(r, tmp.Name(), specsJUnitConfig); err != nil {
			return fmt.Errorf("junit.xml: %w", err)
		}
		var one reporters.JUnitTestSuites
		data, err := os.ReadFile(tmp.Name())
		if err != nil {
			return fmt.Errorf("junit.xml: %w", err)
		}
		if err := xml.Unmarshal(data, &one); err != nil {
			return fmt.Errorf("junit.xml: read Ginkgo's report back: %w", err)
		}
		for _, s := range one.TestSuites {
			if len(s.TestCases) != len(kept) {
				return fmt.Errorf("junit.xml: Ginkgo wrote %d test cases for %d specs", len(s.TestCases), len(kept))
			}
			s.Package = ""
			s.Failures, s.Errors, s.Skipped, s.Disabled = 0, 0, 0, 0
			s.Time = 0
			for i := range s.TestCases {
				c := &s.TestCases[i]
				if c.Properties == nil {
					c.Properties = &reporters.JUnitProperties{}
				}
				c.Properties.Properties = append(c.Properties.Properties, reporters.JUnitProperty{Name: "seconds", Value: fmt.Sprintf("%.3f", c.Time)})
				c.Time = shares(kept[i])
				s.Time += c.Time
				if kept[i].LeafNodeType != types.NodeTypeIt {
					c.Name = "[" + kept[i].LeafNodeType.String() + "]"
				}
				switch {
				case c.Failure != nil:
					s.Failures++
				case c.Error != nil:
					s.Errors++
				case c.Skipped != nil:
					s.Skipped++
					if kept[i].State == types.SpecStatePending {
						s.Disabled++
					}
				}
			}
			s.Tests = len(s.TestCases)
			out.Tests += s.Tests
			out.Failures += s.Failures
			out.Errors += s.Errors
			out.Skipped += s.Skipped
			out.Disabled += s.Skipped
			out.Time += s.Time
			out.TestSuites = append(out.TestSuites, s)
		}
	}
	var buf []byte
	buf = append(buf, xml.Header...)
	body, err := xml.MarshalIndent(out, "", "  ")
	if err != nil {
		return fmt.Errorf("junit.xml: %w", err)
	}
	buf = append(append(buf, body...), '\n')
	if err := os.WriteFile(dst, buf, 0o644); err != nil {
		return fmt.Errorf("junit.xml: %w", err)
	}
	return nil
}

// specShares returns each spec's share of the wall time of the report's
// run (wallShares), a suite node's the sum of every parallel process's.
func specShares(r types.Report) func(types.SpecReport) float64 {
	spans := map[string]span{}
	key := func(i int, s types.SpecReport) string {
		if s.LeafNodeType != types.NodeTypeIt {
			return fmt.Sprintf("%s/%d", s.LeafNodeType, i)
		}
		return fmt.Sprintf("It/%s/%d", s.FullText(), i)
	}
	byNode := map[types.NodeType][]string{}
	byText := map[string][]string{}
	for i, s := range r.SpecReports {
		if s.StartTime.IsZero() || !s.EndTime.After(s.StartTime) {
			continue
		}
		k := key(i, s)
		spans[k] = span{s.StartTime, s.EndTime}
		if s.LeafNodeType != types.NodeTypeIt {
			byNode[s.LeafNodeType] = append(byNode[s.LeafNodeType], k)
		} else {
			byText[s.FullText()] = append(byText[s.FullText()], k)
		}
	}
	shares := wallShares(spans)
	return func(s types.SpecReport) float64 {
		keys := byText[s.FullText()]
		if s.LeafNodeType != types.NodeTypeIt {
			keys = byNode[s.LeafNodeType]
		}
		t := 0.0
		for _, k := range keys {
			t += shares[k]
		}
		return t
	}
}

// forReaders returns the report with what SpecsJUnit leaves out removed,
// and the specs it keeps, in order.
func forReaders(r types.Report) (types.Report, types.SpecReports) {
	r.SuitePath = ""
	var kept types.SpecReports
	suiteNode := map[types.NodeType]int{}
	for _, s := range r.SpecReports {
		if s.LeafNodeType == types.NodeTypeIt {
			if s.State == types.SpecStateSkipped && s.Failure.Message == "" {
				continue
			}
			kept = append(kept, s)
			continue
		}
		i, seen := suiteNode[s.LeafNodeType]
		switch {
		case !seen:
			suiteNode[s.LeafNodeType] = len(kept)
			kept = append(kept, s)
		case kept[i].State == types.SpecStatePassed && s.State != types.SpecStatePassed:
			kept[i] = s
		}
	}
	r.SpecReports = kept
	return r, kept
}
