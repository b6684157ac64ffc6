package nodeimage

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kubeproof/kubeproof/internal/exitcode"
)

// Source is the apt archive the node's root filesystem is bootstrapped
// from: which distribution and suite, at which mirror.
type Source struct {
	// Distribution is "debian" or "ubuntu".
	Distribution string
	Suite        string
	Mirror       string
	// Components are the archive areas debootstrap reads: main, and on
	// Ubuntu universe too (containernetworking-plugins is there).
	Components []string
	// Keyring is the source's Signed-By keyring, if it names a file.
	Keyring string
	// Origin says where the source was found, for the one-line message.
	Origin string
}

// Distributions of the root filesystem.
const (
	Debian = "debian"
	Ubuntu = "ubuntu"
)

// debianSuite is the Debian release of the node's root filesystem. kind's
// own base is newer (trixie, systemd 257, which refuses cgroup v1);
// bookworm's systemd 252 boots on the cgroup v1 hosts kubeproof runs on.
const debianSuite = "bookworm"

// String is the source as the one-line message names it.
func (s Source) String() string {
	name := map[string]string{Debian: "Debian", Ubuntu: "Ubuntu"}[s.Distribution]
	return fmt.Sprintf("%s %s from %s (%s)", name, s.Suite, s.Mirror, s.Origin)
}

// digestName names the source's distribution and suite in the image's
// digest: Debian's is the bare suite, as before Ubuntu sources were read,
// so that the tag of a Debian node image stays what it was.
func (s Source) digestName() string {
	if s.Distribution == Debian {
		return s.Suite
	}
	return s.Distribution + "/" + s.Suite
}

// components the node packages need, by distribution.
func componentsFor(distribution string) []string {
	if distribution == Ubuntu {
		return []string{"main", "universe"}
	}
	return []string{"main"}
}

// DebianSource is Debian bookworm from mirror (--debian-mirror).
func DebianSource(mirror, origin string) Source {
	return Source{Distribution: Debian, Suite: debianSuite, Mirror: mirror, Components: componentsFor(Debian), Origin: origin}
}

// aptEntry is one source of apt's configuration: a deb line of a .list
// file or a deb822 stanza of a .sources file.
type aptEntry struct {
	URIs, Suites, Components []string
	// SignedBy is the keyring file the entry names (empty if none, or if
	// it holds the key inline).
	SignedBy string
	File     string
}

// aptConfig is what a machine's apt configuration says: its sources and
// its release (/etc/os-release).
type aptConfig struct {
	Entries   []aptEntry
	OSRelease map[string]string
}

// readAptConfig reads the machine's apt sources below root ("/" on the
// machine itself): sources.list, sources.list.d/*.list and the deb822
// sources.list.d/*.sources that Ubuntu 24.04 and Debian 13 install.
func readAptConfig(root string) aptConfig {
	var cfg aptConfig
	files := []string{filepath.Join(root, "etc/apt/sources.list")}
	lists, _ := filepath.Glob(filepath.Join(root, "etc/apt/sources.list.d/*.list"))
	sources, _ := filepath.Glob(filepath.Join(root, "etc/apt/sources.list.d/*.sources"))
	files = append(append(files, lists...), sources...)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var entries []aptEntry
		if strings.HasSuffix(f, ".sources") {
			entries = parseDeb822(string(data))
		} else {
			entries = parseOneLine(string(data))
		}
		for i := range entries {
			entries[i].File = strings.TrimPrefix(f, strings.TrimSuffix(root, "/"))
		}
		cfg.Entries = append(cfg.Entries, entries...)
	}
	if data, err := os.ReadFile(filepath.Join(root, "etc/os-release")); err == nil {
		cfg.OSRelease = parseOSRelease(string(data))
	} else if data, err := os.ReadFile(filepath.Join(root, "usr/lib/os-release")); err == nil {
		cfg.OSRelease = parseOSRelease(string(data))
	}
	return cfg
}

// parseDeb822 reads the stanzas of a .sources file that are enabled and of
// type deb (binary packages).
func parseDeb822(text string) []aptEntry {
	var out []aptEntry
	for _, stanza := range splitStanzas(text) {
		fields := map[string]string{}
		var last string
		for _, line := range stanza {
			if strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t") {
				// A continuation line (an inline Signed-By key, say).
				if last != "" {
					fields[last] += "\n" + strings.TrimSpace(line)
				}
				continue
			}
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			last = strings.ToLower(strings.TrimSpace(k))
			fields[last] = strings.TrimSpace(v)
		}
		if !slices.Contains(strings.Fields(fields["types"]), "deb") || strings.EqualFold(fields["enabled"], "no") {
			continue
		}
		e := aptEntry{
			URIs:       strings.Fields(fields["uris"]),
			Suites:     strings.Fields(fields["suites"]),
			Components: strings.Fields(fields["components"]),
		}
		if by := fields["signed-by"]; by != "" && !strings.Contains(by, "\n") {
			e.SignedBy = strings.Fields(by)[0]
		}
		out = append(out, e)
	}
	return out
}

// splitStanzas splits deb822 text at blank lines, dropping comments.
func splitStanzas(text string) [][]string {
	var stanzas [][]string
	var cur []string
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " \t\r")
		switch {
		case strings.HasPrefix(strings.TrimSpace(line), "#"):
			continue
		case strings.TrimSpace(line) == "":
			if len(cur) > 0 {
				stanzas = append(stanzas, cur)
			}
			cur = nil
		default:
			cur = append(cur, line)
		}
	}
	if len(cur) > 0 {
		stanzas = append(stanzas, cur)
	}
	return stanzas
}

// parseOneLine reads one-line entries: deb [options] URI suite components...
func parseOneLine(text string) []aptEntry {
	var out []aptEntry
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(line)
		if len(f) < 3 || f[0] != "deb" {
			continue
		}
		f = f[1:]
		var e aptEntry
		if strings.HasPrefix(f[0], "[") {
			// Options: [arch=amd64 signed-by=/usr/share/keyrings/x.gpg]
			var opts []string
			for len(f) > 0 {
				opt := f[0]
				f = f[1:]
				opts = append(opts, strings.Trim(opt, "[]"))
				if strings.HasSuffix(opt, "]") {
					break
				}
			}
			for _, o := range opts {
				if v, ok := strings.CutPrefix(o, "signed-by="); ok {
					e.SignedBy = v
				}
			}
		}
		if len(f) < 2 {
			continue
		}
		e.URIs, e.Suites, e.Components = []string{f[0]}, []string{f[1]}, f[2:]
		out = append(out, e)
	}
	return out
}

func parseOSRelease(text string) map[string]string {
	out := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if ok && !strings.HasPrefix(k, "#") {
			out[k] = strings.Trim(v, `"'`)
		}
	}
	return out
}

// chooseSource picks the root filesystem's source from the machine's apt
// configuration:
//   - a source that serves Debian bookworm: bookworm from it;
//   - on Debian, a source of the machine's own Debian release: bookworm
//     from the same mirror (a Debian mirror serves every current suite);
//   - on Ubuntu (or a derivative naming UBUNTU_CODENAME), the archive
//     serving the machine's own Ubuntu suite, with main and universe.
//
// Security archives (debian-security, SUITE-security) serve only updates.
func chooseSource(cfg aptConfig) (Source, error) {
	type served struct {
		uri, suite, signedBy, file string
		components                 []string
	}
	// Sources by URI and suite, components merged: one-line files often
	// list main and universe on lines of their own.
	var all []*served
	find := func(uri, suite string) *served {
		for _, s := range all {
			if s.uri == uri && s.suite == suite {
				return s
			}
		}
		s := &served{uri: uri, suite: suite}
		all = append(all, s)
		return s
	}
	for _, e := range cfg.Entries {
		for _, uri := range e.URIs {
			if !strings.HasPrefix(uri, "http://") && !strings.HasPrefix(uri, "https://") && !strings.HasPrefix(uri, "file:/") {
				continue // cdrom:, tor+http: and the like
			}
			for _, suite := range e.Suites {
				s := find(strings.TrimSuffix(uri, "/"), suite)
				for _, c := range e.Components {
					if !slices.Contains(s.components, c) {
						s.components = append(s.components, c)
					}
				}
				if s.signedBy == "" {
					s.signedBy = e.SignedBy
				}
				if s.file == "" {
					s.file = e.File
				}
			}
		}
	}
	security := func(s *served) bool {
		return strings.HasSuffix(s.suite, "-security") || strings.Contains(s.uri, "-security")
	}
	pick := func(distribution, suite string, ok func(*served) bool) (Source, bool) {
		want := componentsFor(distribution)
		for _, s := range all {
			if security(s) || !ok(s) {
				continue
			}
			if !slices.Contains(s.components, want[0]) {
				continue
			}
			src := Source{Distribution: distribution, Suite: suite, Mirror: s.uri, Components: want,
				Keyring: s.signedBy, Origin: "this machine's apt source in " + s.file}
			return src, true
		}
		return Source{}, false
	}
	if src, ok := pick(Debian, debianSuite, func(s *served) bool { return s.suite == debianSuite }); ok {
		return src, nil
	}
	osr := cfg.OSRelease
	if osr["ID"] == Debian && osr["VERSION_CODENAME"] != "" {
		own := osr["VERSION_CODENAME"]
		if src, ok := pick(Debian, debianSuite, func(s *served) bool { return s.suite == own }); ok {
			return src, nil
		}
	}
	ubuntu := osr["UBUNTU_CODENAME"]
	if ubuntu == "" && osr["ID"] == Ubuntu {
		ubuntu = osr["VERSION_CODENAME"]
	}
	if ubuntu != "" {
		if src, ok := pick(Ubuntu, ubuntu, func(s *served) bool { return s.suite == ubuntu }); ok {
			var missing []string
			for _, s := range all {
				if s.uri == src.Mirror && s.suite == ubuntu {
					for _, c := range src.Components {
						if !slices.Contains(s.components, c) {
							missing = append(missing, c)
						}
					}
				}
			}
			if len(missing) > 0 {
				return Source{}, exitcode.Errorf(exitcode.MissingTool, "the apt source for Ubuntu %s (%s in %s) lacks the component %s, which the kind node image's packages come from: add it, or name a Debian mirror with --debian-mirror", ubuntu, src.Mirror, strings.TrimPrefix(src.Origin, "this machine's apt source in "), strings.Join(missing, " and "))
			}
			return src, nil
		}
	}
	what := "Debian " + debianSuite
	if ubuntu != "" {
		what += " or Ubuntu " + ubuntu
	}
	return Source{}, exitcode.Errorf(exitcode.MissingTool, "no apt source for %s found in /etc/apt: the kind node image's root filesystem is bootstrapped from one; name a Debian mirror with --debian-mirror", what)
}
