package framework

import (
	"path/filepath"
	"runtime"
	"strings"

	"github.com/kubeproof/kubeproof/claims/evidence"
)

// moduleRoot is the repository's root as this binary's file names give it:
// a directory on the build machine, or the module path when built with
// -trimpath. This file is framework/source.go under it.
var moduleRoot = func() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return ""
	}
	return filepath.ToSlash(filepath.Dir(filepath.Dir(file)))
}()

// sourceAt names a place in the repository's Go source by its path from
// the repository's root, so that `kubeproof claims show` points a reader at
// the code wherever the binary was built.
func sourceAt(file string, line int) evidence.Source {
	file = filepath.ToSlash(file)
	if moduleRoot != "" {
		if rel, ok := strings.CutPrefix(file, moduleRoot+"/"); ok {
			file = rel
		}
	}
	return evidence.Source{File: file, Line: line}
}

// callerSource is the place of the call to the function that calls it.
func callerSource() evidence.Source {
	_, file, line, ok := runtime.Caller(2)
	if !ok {
		return evidence.Source{}
	}
	return sourceAt(file, line)
}
