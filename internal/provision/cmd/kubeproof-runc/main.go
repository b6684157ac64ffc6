// Command kubeproof-runc is the OCI runtime of kubeproof's private Docker
// daemon: runc, after dropping from the container's spec the capabilities
// this machine's bounding set cannot grant (see package capdrop). Docker
// calls it exactly as it would call runc.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"github.com/kubeproof/kubeproof/internal/provision/internal/capdrop"
)

// realRunc is the runtime we hand over to; $KUBEPROOF_RUNC overrides it.
const realRunc = "/usr/sbin/runc"

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "kubeproof-runc: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	allowed, err := capdrop.BoundingSet()
	if err != nil {
		return err
	}
	if err := capdrop.Rewrite(args, allowed); err != nil {
		return err
	}
	runc, err := runcPath(os.Getenv("KUBEPROOF_RUNC"))
	if err != nil {
		return err
	}
	return syscall.Exec(runc, append([]string{"runc"}, args...), os.Environ())
}

// runcPath is the runc to hand over to: override if set, else realRunc,
// else the first runc on PATH.
func runcPath(override string) (string, error) {
	runc := realRunc
	if override != "" {
		runc = override
	}
	if _, err := os.Stat(runc); err != nil {
		if runc, err = exec.LookPath("runc"); err != nil {
			return "", fmt.Errorf("find runc: %w", err)
		}
	}
	return runc, nil
}
