// Package debpkg installs the Debian packages a local cluster needs
// (CNI plugins, iptables and the tools the providers call), idempotently: packages already
// installed are left alone, and nothing runs when all are present.
package debpkg

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/progress"
)

// Package is a Debian package and a file it installs that we use.
type Package struct {
	Name string
	File string
}

// LocalCluster are the packages the local provider runs. containerd and
// runc are not among them: they are built from Go modules (package
// binaries), as a kubelet of 1.37 or newer needs a containerd 2.
var LocalCluster = []Package{
	{"containernetworking-plugins", "/usr/lib/cni/bridge"},
	{"iptables", "/usr/sbin/iptables"},
	{"conntrack", "/usr/sbin/conntrack"},
	{"iproute2", "/usr/sbin/ip"},
	{"util-linux", "/usr/bin/nsenter"},
}

// Browser is what the report's browser test renders claims.html with:
// Debian's Chromium (headless), and Nanum fonts for the documents' Korean.
var Browser = []Package{
	{"chromium", "/usr/bin/chromium"},
	{"fonts-nanum", "/usr/share/fonts/truetype/nanum/NanumGothic.ttf"},
}

// Missing returns the packages whose file is absent.
func Missing(pkgs []Package) []Package {
	var missing []Package
	for _, p := range pkgs {
		if _, err := os.Stat(p.File); err != nil {
			missing = append(missing, p)
		}
	}
	return missing
}

// Ensure installs whatever of pkgs is missing with apt-get. It needs root and
// apt-get only when something is missing.
func Ensure(ctx context.Context, pkgs []Package, pr *progress.Printer) error {
	missing := Missing(pkgs)
	if len(missing) == 0 {
		return nil
	}
	names := make([]string, len(missing))
	for i, p := range missing {
		names[i] = p.Name
	}
	if os.Geteuid() != 0 {
		return exitcode.Errorf(exitcode.Permission, "installing Debian packages %s needs root", strings.Join(names, " "))
	}
	aptGet, err := exec.LookPath("apt-get")
	if err != nil {
		return exitcode.Errorf(exitcode.MissingTool, "apt-get not found: install the packages %s by hand", strings.Join(names, " "))
	}
	done := pr.Step("installing Debian packages %s", strings.Join(names, " "))
	err = install(ctx, aptGet, names)
	done(err)
	if err != nil {
		return err
	}
	if still := Missing(missing); len(still) > 0 {
		return fmt.Errorf("apt-get installed %s but %s is still missing", still[0].Name, still[0].File)
	}
	return nil
}

func install(ctx context.Context, aptGet string, names []string) error {
	err := apt(ctx, aptGet, append([]string{"install", "-y", "--no-install-recommends"}, names...)...)
	if err == nil {
		return nil
	}
	// A fresh machine has empty package lists: update once, then retry.
	if uerr := apt(ctx, aptGet, "update"); uerr != nil {
		return fmt.Errorf("apt-get update: %w (after install failed: %v)", uerr, err)
	}
	if err := apt(ctx, aptGet, append([]string{"install", "-y", "--no-install-recommends"}, names...)...); err != nil {
		return fmt.Errorf("apt-get install: %w", err)
	}
	return nil
}

func apt(ctx context.Context, aptGet string, args ...string) error {
	cmd := exec.CommandContext(ctx, aptGet, args...)
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) > 5 {
			lines = lines[len(lines)-5:]
		}
		return fmt.Errorf("%w: %s", err, strings.Join(lines, " | "))
	}
	return nil
}
