package nodeimage

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubeproof/kubeproof/internal/exitcode"
)

// Sample apt configurations, as the releases install them.
const (
	debian12List = `# Debian 12, one-line format
deb http://deb.debian.org/debian bookworm main non-free-firmware
deb-src http://deb.debian.org/debian bookworm main non-free-firmware
deb http://deb.debian.org/debian-security/ bookworm-security main non-free-firmware
deb http://deb.debian.org/debian bookworm-updates main non-free-firmware
`
	debian12OSRelease = `PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"
VERSION_CODENAME=bookworm
ID=debian
`
	ubuntu2404Sources = `## Ubuntu 24.04: /etc/apt/sources.list.d/ubuntu.sources
Types: deb
URIs: http://archive.ubuntu.com/ubuntu/
Suites: noble noble-updates noble-backports
Components: main restricted universe multiverse
Signed-By: /usr/share/keyrings/ubuntu-archive-keyring.gpg

Types: deb
URIs: http://security.ubuntu.com/ubuntu/
Suites: noble-security
Components: main restricted universe multiverse
Signed-By: /usr/share/keyrings/ubuntu-archive-keyring.gpg
`
	// Ubuntu 24.04 keeps a sources.list that only points to the file above.
	ubuntu2404List = `# Ubuntu sources have moved to /etc/apt/sources.list.d/ubuntu.sources
`
	ubuntu2404OSRelease = `PRETTY_NAME="Ubuntu 24.04.1 LTS"
NAME="Ubuntu"
VERSION_ID="24.04"
VERSION_CODENAME=noble
ID=ubuntu
ID_LIKE=debian
UBUNTU_CODENAME=noble
`
	// Ubuntu 22.04 one-line, main and universe on lines of their own.
	ubuntu2204List = `deb http://azure.archive.ubuntu.com/ubuntu/ jammy main restricted
deb http://azure.archive.ubuntu.com/ubuntu/ jammy universe
deb http://azure.archive.ubuntu.com/ubuntu/ jammy-updates main restricted
deb http://security.ubuntu.com/ubuntu jammy-security main
`
	ubuntu2204OSRelease = `VERSION_CODENAME=jammy
ID=ubuntu
UBUNTU_CODENAME=jammy
`
	// A Debian mirror added to an Ubuntu machine, with a keyring option and
	// a disabled deb822 stanza of a third-party repository.
	debianOnUbuntuList = `deb [arch=amd64 signed-by=/etc/apt/keyrings/debian.gpg] http://mirror.example/debian bookworm main
`
	thirdPartySources = `Types: deb
URIs: https://packages.example/apt
Suites: stable
Components: main
Enabled: no

Types: deb
URIs: https://deb.nodesource.example/node_20.x
Suites: nodistro
Components: main
Signed-By:
 -----BEGIN PGP PUBLIC KEY BLOCK-----
 .
 mQINBF...
 -----END PGP PUBLIC KEY BLOCK-----
`
	debian13Sources = `Types: deb
URIs: http://deb.debian.org/debian
Suites: trixie trixie-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
`
	debian13OSRelease = `VERSION_CODENAME=trixie
ID=debian
`
)

// machine writes an /etc of apt files (name -> content) below a temporary
// root.
func machine(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestChooseSource(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  Source // Origin is checked by its file only
		file  string
		err   string
	}{{
		name:  "Debian 12, one-line sources.list",
		files: map[string]string{"etc/apt/sources.list": debian12List, "etc/os-release": debian12OSRelease},
		want:  Source{Distribution: Debian, Suite: "bookworm", Mirror: "http://deb.debian.org/debian", Components: []string{"main"}},
		file:  "/etc/apt/sources.list",
	}, {
		name: "Ubuntu 24.04, deb822 ubuntu.sources",
		files: map[string]string{"etc/apt/sources.list": ubuntu2404List, "etc/os-release": ubuntu2404OSRelease,
			"etc/apt/sources.list.d/ubuntu.sources": ubuntu2404Sources},
		want: Source{Distribution: Ubuntu, Suite: "noble", Mirror: "http://archive.ubuntu.com/ubuntu",
			Components: []string{"main", "universe"}, Keyring: "/usr/share/keyrings/ubuntu-archive-keyring.gpg"},
		file: "/etc/apt/sources.list.d/ubuntu.sources",
	}, {
		name:  "Ubuntu 22.04, one-line, universe on a line of its own",
		files: map[string]string{"etc/apt/sources.list": ubuntu2204List, "etc/os-release": ubuntu2204OSRelease},
		want:  Source{Distribution: Ubuntu, Suite: "jammy", Mirror: "http://azure.archive.ubuntu.com/ubuntu", Components: []string{"main", "universe"}},
		file:  "/etc/apt/sources.list",
	}, {
		name: "mixed: Ubuntu 24.04 with a Debian bookworm mirror added takes Debian",
		files: map[string]string{"etc/os-release": ubuntu2404OSRelease,
			"etc/apt/sources.list.d/ubuntu.sources":      ubuntu2404Sources,
			"etc/apt/sources.list.d/third-party.sources": thirdPartySources,
			"etc/apt/sources.list.d/debian.list":         debianOnUbuntuList},
		want: Source{Distribution: Debian, Suite: "bookworm", Mirror: "http://mirror.example/debian",
			Components: []string{"main"}, Keyring: "/etc/apt/keyrings/debian.gpg"},
		file: "/etc/apt/sources.list.d/debian.list",
	}, {
		name:  "Debian 13: bookworm from the machine's own Debian mirror",
		files: map[string]string{"etc/apt/sources.list.d/debian.sources": debian13Sources, "etc/os-release": debian13OSRelease},
		want: Source{Distribution: Debian, Suite: "bookworm", Mirror: "http://deb.debian.org/debian",
			Components: []string{"main"}, Keyring: "/usr/share/keyrings/debian-archive-keyring.gpg"},
		file: "/etc/apt/sources.list.d/debian.sources",
	}, {
		name:  "Ubuntu without universe",
		files: map[string]string{"etc/apt/sources.list": "deb http://archive.ubuntu.com/ubuntu noble main restricted\n", "etc/os-release": ubuntu2404OSRelease},
		err:   "lacks the component universe",
	}, {
		name:  "none: no apt sources at all",
		files: map[string]string{"etc/os-release": ubuntu2404OSRelease},
		err:   "no apt source for Debian bookworm or Ubuntu noble found",
	}, {
		name:  "none: only a third party's sources and a security archive",
		files: map[string]string{"etc/apt/sources.list.d/third-party.sources": thirdPartySources, "etc/apt/sources.list": "deb http://security.ubuntu.com/ubuntu noble-security main universe\n"},
		err:   "no apt source for Debian bookworm found",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := chooseSource(readAptConfig(machine(t, tc.files)))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				if exitcode.Of(err) != exitcode.MissingTool {
					t.Errorf("exit code %v, want %v", exitcode.Of(err), exitcode.MissingTool)
				}
				if !strings.Contains(err.Error(), "--debian-mirror") {
					t.Errorf("the error does not name --debian-mirror: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(got.Origin, tc.file) {
				t.Errorf("origin %q, want one naming %s", got.Origin, tc.file)
			}
			got.Origin = ""
			if got.Distribution != tc.want.Distribution || got.Suite != tc.want.Suite || got.Mirror != tc.want.Mirror ||
				!slices.Equal(got.Components, tc.want.Components) || got.Keyring != tc.want.Keyring {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// debootstrap gets the suite's components and a keyring, and a script by
// family when it has none of the suite's own (Debian 12's debootstrap
// knows no noble).
func TestDebootstrapArgs(t *testing.T) {
	defer func(f func(string) bool) { fileExists = f }(fileExists)
	fileExists = func(p string) bool { return p == "/usr/share/keyrings/ubuntu-archive-keyring.gpg" }
	noble := Source{Distribution: Ubuntu, Suite: "noble", Mirror: "http://archive.ubuntu.com/ubuntu", Components: []string{"main", "universe"},
		Keyring: "/etc/apt/keyrings/missing.gpg"}
	args := debootstrapArgs(noble, "/tmp/r", func(s string) bool { return s == "jammy" })
	tail := strings.Join(args[len(args)-4:], " ")
	if tail != "noble /tmp/r http://archive.ubuntu.com/ubuntu gutsy" {
		t.Errorf("positional arguments %q", tail)
	}
	if !slices.Contains(args, "--components=main,universe") || !slices.Contains(args, "--keyring=/usr/share/keyrings/ubuntu-archive-keyring.gpg") {
		t.Errorf("args %q", args)
	}
	bookworm := DebianSource("http://mirror.example/debian", "--debian-mirror")
	args = debootstrapArgs(bookworm, "/tmp/r", func(string) bool { return true })
	if got := strings.Join(args[len(args)-3:], " "); got != "bookworm /tmp/r http://mirror.example/debian" {
		t.Errorf("positional arguments %q", got)
	}
	for _, a := range args {
		if strings.HasPrefix(a, "--keyring") {
			t.Errorf("no Debian keyring here, yet %s", a)
		}
	}
}

// Debian's node image keeps the tag it had before Ubuntu sources were read:
// the digest names a Debian source by its bare suite.
func TestDigestNameOfDebianUnchanged(t *testing.T) {
	if n := DebianSource("", "").digestName(); n != "bookworm" {
		t.Errorf("Debian bookworm digests as %q", n)
	}
	if n := (Source{Distribution: Ubuntu, Suite: "noble"}).digestName(); n != "ubuntu/noble" {
		t.Errorf("Ubuntu noble digests as %q", n)
	}
}

// The provider's one line says whether the image was built and from what.
func TestResultLine(t *testing.T) {
	built := Result{Ref: "kubeproof.local/kind-node:v1-abc", Built: true,
		Source: Source{Distribution: Ubuntu, Suite: "noble", Mirror: "http://archive.ubuntu.com/ubuntu", Origin: "this machine's apt source in /etc/apt/sources.list.d/ubuntu.sources"}}
	found := Result{Ref: "kubeproof.local/kind-node:v1-abc"}
	for line, want := range map[string]string{
		built.String(): "built here offline from Go modules and a root filesystem of Ubuntu noble from http://archive.ubuntu.com/ubuntu (this machine's apt source in /etc/apt/sources.list.d/ubuntu.sources)",
		found.String(): "found in Docker",
	} {
		if !strings.HasPrefix(line, "node image kubeproof.local/kind-node:v1-abc: kubeproof's own, ") || !strings.Contains(line, want) || strings.Contains(line, "\n") {
			t.Errorf("line %q, want one containing %q", line, want)
		}
	}
}
