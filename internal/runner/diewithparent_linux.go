package runner

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// dieWithParent makes the kernel kill this process when its parent dies:
// a spec process (or Ginkgo's CLI that runs them) must not outlive the
// kubeproof that started it, even when that one is killed with SIGKILL and
// can run no cleanup of its own.
func dieWithParent() {
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "kubeproof: cannot tie the spec process to its parent: %v\n", err)
		return
	}
	// The parent may have died before the call: then another process (init,
	// or a subreaper) adopted us. The parent itself may be PID 1: kubeproof
	// is, in its container image.
	if os.Getppid() != parentAtStart {
		fmt.Fprintf(os.Stderr, "kubeproof: the process that started this one (pid %d) is gone\n", parentAtStart)
		os.Exit(1)
	}
}

// parentAtStart is this process's parent when it started, before anything
// could have made it an orphan but a parent dying within the first
// instructions.
var parentAtStart = os.Getppid()
