package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	kpreport "github.com/kubeproof/kubeproof/internal/report"
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

// report is what the checks read of a report directory: claims.json, and
// the suite nodes of specs.json (Ginkgo's JSON report).
type report struct {
	Summary map[string]int `json:"summary"`
	// Kubeproof is the kubeproof that wrote the report: claims.json of
	// releases before test names became claim IDs lacks it.
	Kubeproof *struct {
		Version string `json:"version"`
	} `json:"kubeproof"`
	// Run is the suites' wall clock (claims.json of older releases lacks it).
	Run *struct {
		Seconds float64 `json:"seconds"`
	} `json:"run"`
	Documents []struct {
		Claims []claimResult `json:"claims"`
	} `json:"documents"`
	Specs []specState `json:"specs"`
	// suiteNodes are the suite nodes' types (SynchronizedBeforeSuite, ...)
	// with the worst state each had in any process.
	suiteNodes map[string]string
}

// specState is a spec of claims.json: its ID and Ginkgo state.
type specState struct {
	ID        string    `json:"id"`
	State     string    `json:"state"`
	StartedAt time.Time `json:"startedAt"`
	EndedAt   time.Time `json:"endedAt"`
}

type claimResult struct {
	Claim struct {
		ID        string `json:"id"`
		Title     string `json:"title"`
		Statement string `json:"statement"`
		Source    *struct {
			File string `json:"file"`
			Line int    `json:"line"`
		} `json:"source"`
	} `json:"claim"`
	Verdict string `json:"verdict"`
	Reason  string `json:"reason"`
	Specs   []struct {
		ID      string  `json:"id"`
		Seconds float64 `json:"seconds"`
	} `json:"specs"`
}

func loadReport(dir string) (*report, error) {
	var r report
	data, err := os.ReadFile(filepath.Join(dir, "claims.json"))
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("claims.json: %w", err)
	}
	data, err = os.ReadFile(filepath.Join(dir, "specs.json"))
	if err != nil {
		return nil, err
	}
	var suites []struct {
		SpecReports []struct {
			LeafNodeType string
			State        string
		}
	}
	if err := json.Unmarshal(data, &suites); err != nil {
		return nil, fmt.Errorf("specs.json: %w", err)
	}
	r.suiteNodes = map[string]string{}
	for _, s := range suites {
		for _, sr := range s.SpecReports {
			if sr.LeafNodeType == "It" {
				continue
			}
			if prev, ok := r.suiteNodes[sr.LeafNodeType]; !ok || prev == "passed" {
				r.suiteNodes[sr.LeafNodeType] = sr.State
			}
		}
	}
	return &r, nil
}

// claimCounts is what claims-junit.xml must count, from claims.json's
// verdicts: every claim a test; refuted ones failures when refutedFails;
// errors errors; those not decided here skipped.
func (r *report) claimCounts(refutedFails bool) Counts {
	var c Counts
	for v, n := range r.Summary {
		for range n {
			c.add(claimResult{Verdict: v}.result(refutedFails))
		}
	}
	return c
}

// result is the JUnit result a verdict must have.
func (c claimResult) result(refutedFails bool) string {
	switch c.Verdict {
	case "refuted":
		if refutedFails {
			return "failure"
		}
	case "error":
		return "error"
	case "not-checkable", "not-testable", "open", "not-run":
		return "skipped"
	}
	return "passed"
}

// specCounts is what junit.xml must count: a test per spec claims.json
// lists (the specs that ran) and one per kind of suite node specs.json has.
func (r *report) specCounts() Counts {
	var c Counts
	for _, s := range r.Specs {
		c.add(stateResult(s.State))
	}
	for _, state := range r.suiteNodes {
		c.add(stateResult(state))
	}
	return c
}

// stateResult is the JUnit result of a Ginkgo spec state, as Ginkgo's JUnit
// reporter writes it.
func stateResult(state string) string {
	switch state {
	case "failed", "timedout", "aborted":
		return "failure"
	case "panicked", "interrupted":
		return "error"
	case "skipped", "pending":
		return "skipped"
	}
	return "passed"
}

// limit keeps the first few problems of a kind, and says how many more.
type limit struct {
	problems []string
	n        map[string]int
}

func (l *limit) add(kind, format string, args ...any) {
	if l.n == nil {
		l.n = map[string]int{}
	}
	l.n[kind]++
	if l.n[kind] <= 3 {
		l.problems = append(l.problems, fmt.Sprintf(format, args...))
	}
}

func (l *limit) done() []string {
	for _, kind := range sortedKeys(l.n) {
		if l.n[kind] > 3 {
			l.problems = append(l.problems, fmt.Sprintf("%d more of: %s", l.n[kind]-3, kind))
		}
	}
	return l.problems
}

// checkClaimsJUnit checks what readers show of claims-junit.xml: a unique
// name per case, its claim's ID and title, a class name without a dot,
// file and line those of the claim in claims.json relative to its
// repository and, when the report was judged with this checkout's catalog
// (current), at the claim's id in that file, the result and message its
// verdict calls for, and a time no longer than its specs ran.
func checkClaimsJUnit(doc Doc, r *report, refutedFails, current bool) []string {
	byID := map[string]claimResult{}
	for _, d := range r.Documents {
		for _, c := range d.Claims {
			byID[c.Claim.ID] = c
		}
	}
	var l limit
	seen := map[string]bool{}
	files := map[string][]string{}
	for _, s := range doc.Suites {
		for _, tc := range s.Cases {
			name, class := tc.Attributes["name"], tc.Attributes["classname"]
			if seen[class+"\x00"+name] {
				l.add("duplicate name", "two cases named %q in class %q", name, class)
			}
			seen[class+"\x00"+name] = true
			if class == "" || strings.Contains(class, ".") {
				l.add("classname", "case %q: classname %q is empty or has a dot", name, class)
			}
			id, _, _ := strings.Cut(name, ": ")
			res, ok := byID[id]
			if !ok {
				l.add("unknown claim", "case %q names no claim of claims.json", name)
				continue
			}
			// The name is the claim's ID and title: never its statement,
			// whose rewording would start a new test history (a report of
			// an older release named its tests otherwise).
			if want := id + map[bool]string{true: ": " + res.Claim.Title}[res.Claim.Title != ""]; name != want && r.Kubeproof != nil {
				l.add("name", "claim %s: name %q, want %q (its ID and title)", id, name, want)
			}
			if want := res.result(refutedFails); tc.Result != want {
				l.add("result", "claim %s (%s): %s, want %s", id, res.Verdict, tc.Result, want)
			} else if (want == "failure" || want == "error") && tc.Message != res.Reason {
				l.add("message", "claim %s: message %q is not the verdict's reason %q", id, tc.Message, res.Reason)
			}
			// A case's time is its share of its specs' wall time: never more
			// than they ran.
			seconds := 0.0
			for _, sp := range res.Specs {
				seconds += sp.Seconds
			}
			if t, err := strconv.ParseFloat(tc.Attributes["time"], 64); err != nil || t < 0 || (t > seconds+0.0015 && r.Kubeproof != nil) {
				l.add("time", "claim %s: time %q, its specs ran %.3f s", id, tc.Attributes["time"], seconds)
			}
			// File and line: the claim's, relative to its repository, or
			// none where the claims file is not on this machine (an older
			// release wrote them as claims.json has them).
			file, line := tc.Attributes["file"], tc.Attributes["line"]
			if r.Kubeproof == nil {
				if res.Claim.Source == nil || file != res.Claim.Source.File || line != strconv.Itoa(res.Claim.Source.Line) {
					l.add("file and line", "claim %s: file %q line %q, claims.json says %+v", id, file, line, res.Claim.Source)
				}
				continue
			}
			wantFile, onDisk := "", false
			if res.Claim.Source != nil {
				wantFile, onDisk = kpreport.RepositoryPath(res.Claim.Source.File)
			}
			if !onDisk {
				if file != "" || line != "" {
					l.add("file and line", "claim %s: file %q line %q for a claims file not on this machine (%+v)", id, file, line, res.Claim.Source)
				}
				continue
			}
			if file != wantFile || line != strconv.Itoa(res.Claim.Source.Line) {
				l.add("file and line", "claim %s: file %q line %q, claims.json says %+v (%s in its repository)", id, file, line, res.Claim.Source, wantFile)
				continue
			}
			if !current {
				continue
			}
			lines, ok := files[file]
			if !ok {
				data, err := os.ReadFile(res.Claim.Source.File)
				if err != nil {
					l.add("file", "claim %s: %v", id, err)
					continue
				}
				lines = strings.Split(string(data), "\n")
				files[file] = lines
			}
			n := res.Claim.Source.Line
			if n < 1 || n > len(lines) || strings.TrimSpace(lines[n-1]) != "- id: "+id {
				l.add("line", "claim %s: %s:%d is not its id", id, file, n)
			}
		}
	}
	return l.done()
}

// checkSpecsJUnit checks what readers show of junit.xml: unique names that
// carry no labels nor node types, no path of the machine that ran it, no
// timeline for a passed spec.
func checkSpecsJUnit(doc Doc) []string {
	var l limit
	seen := map[string]bool{}
	for _, s := range doc.Suites {
		if p := s.Attributes["package"]; strings.Contains(p, "/") {
			l.add("package", "testsuite %q: package %q is a path", s.Attributes["name"], p)
		}
		for _, tc := range s.Cases {
			name, class := tc.Attributes["name"], tc.Attributes["classname"]
			if seen[class+"\x00"+name] {
				l.add("duplicate name", "two cases named %q in class %q", name, class)
			}
			seen[class+"\x00"+name] = true
			if strings.Contains(name, "[spec:") || strings.Contains(name, "claim:") || strings.HasPrefix(name, "[It]") || name == "" {
				l.add("name", "case %q: a label or node type in its name, or none", name)
			}
			if tc.Result == "passed" && tc.SystemErr > 0 {
				l.add("timeline", "passed case %q carries %d bytes of timeline", name, tc.SystemErr)
			}
		}
	}
	return l.done()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
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

// checkTime holds a file's summed time to the run's clock, each spec
// counted once and specs that ran at once sharing it: junit.xml's cases
// (every spec and suite node) add up to the run's wall time, within 10%;
// claims-junit.xml's to the time at least one spec that decided a claim
// was running (a run's suite setup decides none), within rounding.
func checkTime(file string, doc Doc, r *report) []string {
	if r.Run == nil || r.Run.Seconds <= 0 {
		return nil
	}
	sum, wall := doc.Time(), r.Run.Seconds
	if sum > wall*1.001+0.01 {
		return []string{fmt.Sprintf("its cases' times add up to %.1f s, more than the run's wall time of %.1f s", sum, wall)}
	}
	if file == "junit.xml" && sum < wall*0.9 {
		return []string{fmt.Sprintf("its cases' times add up to %.1f s, %.0f%% of the run's wall time of %.1f s (want 90%% or more)", sum, 100*sum/wall, wall)}
	}
	if file == "claims-junit.xml" {
		ran, cases := r.claimSpecsRan(), 0
		for _, s := range doc.Suites {
			cases += len(s.Cases)
		}
		if math.Abs(sum-ran) > 0.0005*float64(cases)+0.01 {
			return []string{fmt.Sprintf("its cases' times add up to %.3f s; specs that decided claims ran for %.3f s of the wall clock", sum, ran)}
		}
	}
	return nil
}

// claimSpecsRan is how long at least one spec that decided a claim was
// running: the union of their spans in claims.json.
func (r *report) claimSpecsRan() float64 {
	decided := map[string]bool{}
	for _, d := range r.Documents {
		for _, c := range d.Claims {
			for _, s := range c.Specs {
				decided[s.ID] = true
			}
		}
	}
	type span struct{ start, end time.Time }
	var spans []span
	for _, s := range r.Specs {
		if decided[s.ID] && !s.StartedAt.IsZero() && s.EndedAt.After(s.StartedAt) {
			spans = append(spans, span{s.StartedAt, s.EndedAt})
		}
	}
	slices.SortFunc(spans, func(a, b span) int { return a.start.Compare(b.start) })
	total := 0.0
	var cur *span
	for i := range spans {
		switch {
		case cur == nil:
			cur = &spans[i]
		case spans[i].start.After(cur.end):
			total += cur.end.Sub(cur.start).Seconds()
			cur = &spans[i]
		case spans[i].end.After(cur.end):
			cur.end = spans[i].end
		}
	}
	if cur != nil {
		total += cur.end.Sub(cur.start).Seconds()
	}
	return total
}
