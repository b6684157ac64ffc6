// What report reads of a run's report directory and where it writes.

package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kubeproof/kubeproof/fixtures"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/report"
	"github.com/kubeproof/kubeproof/internal/runner"
)

// runsClaimsFile sets --claims-file, when it is not given, to the claims
// file the run in dir judged (runClaimsFile).
func (s *selection) runsClaimsFile(dir string) error {
	if s.claimsFile != "" {
		return nil
	}
	f, err := runClaimsFile(dir)
	if f != "" {
		s.claimsFile = f
		printer().Infof("judging with the run's claims file %s (add --claims-file to give another)", f)
	}
	return err
}

// runClaimsFile is the claims file whose claims the run in dir judged, as
// its claims.json records their source, when they were not the built-in
// catalog's: judged again with the catalog, the run's own claims would
// vanish from its report (a claim in error shown as no error at all).
// Empty when the run judged the catalog, or its claims.json does not say.
func runClaimsFile(dir string) (string, error) {
	prior, err := report.Load(dir)
	if err != nil {
		return "", nil
	}
	var files []string
	for _, d := range prior.Documents {
		for _, r := range d.Claims {
			s := r.Claim.Source
			if s != nil && !strings.HasPrefix(filepath.ToSlash(s.File), fixtures.ClaimsDir+"/") && !slices.Contains(files, s.File) {
				files = append(files, s.File)
			}
		}
	}
	switch {
	case len(files) == 0:
		return "", nil
	case len(files) > 1:
		return "", exitcode.Errorf(exitcode.Usage, "--report-dir %s: its run judged the claims of %s: give the one to judge with --claims-file", dir, strings.Join(files, ", "))
	}
	if _, err := os.Stat(files[0]); err != nil {
		return "", exitcode.Errorf(exitcode.Usage, "--report-dir %s: its run judged the claims of %s, which is not here (%v): give it with --claims-file", dir, files[0], err)
	}
	return files[0], nil
}

// judgedDir is where report writes: --to, or --report-dir with -judged;
// --report-dir itself only with --overwrite. A directory that holds
// another run's specs.json is never written over.
func judgedDir(dir, to string, overwrite bool) (string, error) {
	switch {
	case overwrite && to != "":
		return "", exitcode.Errorf(exitcode.Usage, "--to and --overwrite: give one (--overwrite writes into --report-dir)")
	case overwrite:
		return dir, nil
	case to == "":
		to = filepath.Clean(dir) + "-judged"
	}
	same, err := sameDir(dir, to)
	if err != nil {
		return "", exitcode.Errorf(exitcode.Usage, "--to %s: %v", to, err)
	}
	if same {
		return "", exitcode.Errorf(exitcode.Usage, "--to %s is --report-dir: add --overwrite to write over the run's reports", to)
	}
	if _, err := os.Stat(filepath.Join(to, runner.SpecsReportName)); err == nil {
		if prior, err := report.Load(to); err != nil || prior.JudgedFrom == "" {
			return "", exitcode.Errorf(exitcode.Usage, "--to %s is the report directory of a run (it has %s): pick another", to, runner.SpecsReportName)
		}
	}
	return to, nil
}

// sameDir says whether a and b are one directory (b need not exist).
func sameDir(a, b string) (bool, error) {
	aa, err := filepath.Abs(a)
	if err != nil {
		return false, err
	}
	bb, err := filepath.Abs(b)
	if err != nil {
		return false, err
	}
	if aa == bb {
		return true, nil
	}
	ai, aerr := os.Stat(aa)
	bi, berr := os.Stat(bb)
	return aerr == nil && berr == nil && os.SameFile(ai, bi), nil
}
