// Package buildinfo says which kubeproof this is: its version and commit,
// the Go release and platform it was built with, and the registry its
// release published its images to. A release stamps them at link time
// (goreleaser's ldflags, .goreleaser.yaml; `make build` stamps the version
// and commit); a binary built otherwise reads what Go recorded in it (`go
// install ...@VERSION` records the module's version).
package buildinfo

import (
	"runtime"
	"runtime/debug"
	"strings"

	"golang.org/x/mod/module"
)

// Stamped at link time with -X github.com/kubeproof/kubeproof/internal/buildinfo.NAME=VALUE.
var (
	version string
	commit  string
	// registry is the registry path the release pushed its images to
	// (host[/path]), from the release workflow's configuration: empty in
	// every other build. No registry is named in the source.
	registry string
)

// Version is the release (v0.2.0), the module version `go install`
// recorded, or "dev".
func Version() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// Commit is the commit the binary was built from, with "-dirty" when the
// tree had changes; empty when nothing recorded it (`go install` of a
// tagged version records none; of a commit, its pseudo-version names it).
func Commit() string {
	if commit != "" {
		return commit
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" && modified == "true" {
		rev += "-dirty"
	}
	// `go install ...@COMMIT` records no VCS data, but its pseudo-version
	// ends in the commit.
	if v := bi.Main.Version; rev == "" && module.IsPseudoVersion(v) {
		rev, _ = module.PseudoVersionRev(v)
	}
	return rev
}

// GoVersion is the Go release the binary was built with.
func GoVersion() string { return runtime.Version() }

// Platform is the system and architecture the binary runs on (linux/amd64).
func Platform() string { return runtime.GOOS + "/" + runtime.GOARCH }

// Arch is the architecture the binary runs on (amd64).
func Arch() string { return runtime.GOARCH }

// ReleaseRegistry is the registry path of the release's published images,
// or "" for a binary no release made.
func ReleaseRegistry() string { return strings.TrimSuffix(registry, "/") }

// ImageTag is the tag of this binary's images in a registry: its version,
// with what a tag may not hold (a pseudo-version's "+", say) made "-".
func ImageTag() string { return Tag(Version()) }

// Tag turns a version into an image tag: letters, digits, "_", "." and
// "-", at most 128, not starting with "." or "-".
func Tag(v string) string {
	b := []byte(v)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'
		if !ok {
			b[i] = '-'
		}
	}
	t := strings.TrimLeft(string(b), ".-")
	if len(t) > 128 {
		t = t[:128]
	}
	if t == "" {
		return "dev"
	}
	return t
}
