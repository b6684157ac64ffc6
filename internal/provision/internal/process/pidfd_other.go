//go:build !linux

package process

import (
	"fmt"
	"runtime"
	"time"
)

// Processes are waited on with a pidfd, which only Linux has; the providers
// that start processes refuse other systems before they get here.
func withPidfd(pid int, _ func(fd int) error) error {
	return fmt.Errorf("stop process %d: kubeproof's processes are managed on Linux only, not %s", pid, runtime.GOOS)
}

func waitFD(int, time.Duration) bool { return false }
