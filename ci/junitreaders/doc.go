// What a reader script made of a JUnit file, and the counts and time a
// reader shows of it.

package main

import (
	"fmt"
	"strconv"
)

// Counts are what a CI reader shows of a JUnit file.
type Counts struct {
	Tests, Failures, Errors, Skipped int
}

func (c Counts) String() string {
	return fmt.Sprintf("tests %d, failures %d, errors %d, skipped %d", c.Tests, c.Failures, c.Errors, c.Skipped)
}

// add counts one test case of a result: passed, failure, error or skipped.
func (c *Counts) add(result string) {
	c.Tests++
	switch result {
	case "failure":
		c.Failures++
	case "error":
		c.Errors++
	case "skipped":
		c.Skipped++
	}
}

// Doc is what a reader script made of a JUnit file (read.js, read.py).
type Doc struct {
	// Top are the attributes of testsuites (nil when the root is a suite).
	Top    map[string]string `json:"top"`
	Suites []Suite           `json:"suites"`
}

// Suite is a testsuite: its attributes as written, the counts the
// library itself parsed from them (junitparser only), and its cases.
type Suite struct {
	Attributes map[string]string `json:"attributes"`
	Parsed     map[string]*int   `json:"parsed,omitempty"`
	Cases      []Case            `json:"cases"`
}

// Case is a testcase as the reader saw it.
type Case struct {
	Attributes map[string]string `json:"attributes"`
	// Result is passed, failure, error or skipped.
	Result  string `json:"result"`
	Message string `json:"message"`
	// SystemErr is the length of its system-err.
	SystemErr int `json:"systemErr"`
}

// Counted counts the test cases by result: what a reader shows.
func (d Doc) Counted() Counts {
	var c Counts
	for _, s := range d.Suites {
		for _, tc := range s.Cases {
			c.add(tc.Result)
		}
	}
	return c
}

// Stated checks the counts the file states (each suite's attributes, as
// written and as the library parsed them, and the top's) against its cases:
// readers that show those counts must show the same.
func (d Doc) Stated(total Counts) []string {
	var problems []string
	compare := func(where string, attrs map[string]string, want Counts) {
		for _, f := range []struct {
			name string
			want int
		}{{"tests", want.Tests}, {"failures", want.Failures}, {"errors", want.Errors}, {"skipped", want.Skipped}} {
			v, ok := attrs[f.name]
			if !ok {
				problems = append(problems, fmt.Sprintf("%s has no %s attribute", where, f.name))
				continue
			}
			if n, err := strconv.Atoi(v); err != nil || n != f.want {
				problems = append(problems, fmt.Sprintf("%s states %s=%q, its cases count %d", where, f.name, v, f.want))
			}
		}
	}
	for i, s := range d.Suites {
		var own Counts
		for _, tc := range s.Cases {
			own.add(tc.Result)
		}
		where := fmt.Sprintf("testsuite %d (%s)", i+1, s.Attributes["name"])
		compare(where, s.Attributes, own)
		for name, n := range s.Parsed {
			want := map[string]int{"tests": own.Tests, "failures": own.Failures, "errors": own.Errors, "skipped": own.Skipped}[name]
			if n == nil || *n != want {
				problems = append(problems, fmt.Sprintf("%s: the library parsed %s = %v, its cases count %d", where, name, show(n), want))
			}
		}
	}
	if d.Top != nil {
		compare("testsuites", d.Top, total)
	}
	return problems
}

func show(n *int) string {
	if n == nil {
		return "none"
	}
	return strconv.Itoa(*n)
}

// Time is the seconds a reader sums from a file's test cases.
func (d Doc) Time() float64 {
	t := 0.0
	for _, s := range d.Suites {
		for _, tc := range s.Cases {
			v, _ := strconv.ParseFloat(tc.Attributes["time"], 64)
			t += v
		}
	}
	return t
}
