package main

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	kpreport "github.com/kubeproof/kubeproof/internal/report"
)

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
