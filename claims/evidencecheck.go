package claims

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/kubeproof/kubeproof/claims/evidence"
	"github.com/kubeproof/kubeproof/claims/expect"
)

// CheckEvidence reports every expectation and context path of the catalog's
// testable claims that no declared evidence of the claim's specs can hold,
// and every expectation whose value the declared type can never take (a
// number held against a string, a pattern against a number).
func CheckEvidence(cat *Catalog, decls []evidence.EvidenceDecl) []error {
	bySpec := map[string]map[string]reflect.Type{}
	for _, d := range decls {
		if bySpec[d.Spec] == nil {
			bySpec[d.Spec] = map[string]reflect.Type{}
		}
		bySpec[d.Spec][d.Name] = d.Type
	}
	var errs []error
	for _, c := range WithReadings(cat.Claims) {
		if !c.Checked() {
			continue
		}
		check := func(path, spec string, e *expect.Expectation) {
			specs := c.Specs
			if spec != "" {
				specs = []string{spec}
			}
			var tried []string
			for _, s := range specs {
				name, _, _ := strings.Cut(path, ".")
				t, ok := bySpec[s][name]
				if !ok {
					continue
				}
				leaf, err := evidence.Resolve(t, path)
				if err != nil {
					tried = append(tried, fmt.Sprintf("%s: %v", s, err))
					continue
				}
				if e != nil {
					if err := e.FitsWith(leaf, func(p string) (reflect.Type, error) { return resolveIn(bySpec, specs, p) }); err != nil {
						tried = append(tried, fmt.Sprintf("%s: %v", s, err))
						continue
					}
				}
				return
			}
			near := evidence.Nearest(path, specPaths(bySpec, specs), 3)
			if len(tried) == 0 {
				errs = append(errs, fmt.Errorf("claim %s: evidence %s is recorded by none of its specs %v%s", c.ID, path, specs, near))
				return
			}
			errs = append(errs, fmt.Errorf("claim %s: evidence %s: %s%s", c.ID, path, strings.Join(tried, "; "), near))
		}
		for i := range c.Expect {
			check(c.Expect[i].Evidence, c.Expect[i].Spec, &c.Expect[i])
		}
		for _, alt := range c.Conditional {
			for i := range alt.Expect {
				check(alt.Expect[i].Evidence, alt.Expect[i].Spec, &alt.Expect[i])
			}
		}
		for _, p := range c.Context {
			check(p, "", nil)
		}
	}
	return errs
}

// specPaths are the evidence paths the specs record (evidence.Paths of each
// declaration).
func specPaths(bySpec map[string]map[string]reflect.Type, specs []string) []string {
	var out []string
	for _, s := range specs {
		for name, t := range bySpec[s] {
			out = append(out, evidence.Paths(name, t)...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// resolveIn resolves path through the evidence of the first of specs that
// records its name.
func resolveIn(bySpec map[string]map[string]reflect.Type, specs []string, path string) (reflect.Type, error) {
	name, _, _ := strings.Cut(path, ".")
	var tried []string
	for _, s := range specs {
		t, ok := bySpec[s][name]
		if !ok {
			continue
		}
		leaf, err := evidence.Resolve(t, path)
		if err == nil {
			return leaf, nil
		}
		tried = append(tried, err.Error())
	}
	if len(tried) == 0 {
		return nil, fmt.Errorf("%s is recorded by none of the specs %v%s", path, specs, evidence.Nearest(path, specPaths(bySpec, specs), 3))
	}
	return nil, fmt.Errorf("%s: %s", path, strings.Join(tried, "; "))
}
