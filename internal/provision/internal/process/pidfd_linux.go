package process

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// withPidfd runs fn with a pidfd for pid; a process that is already gone is
// not an error.
func withPidfd(pid int, fn func(fd int) error) error {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		if errors.Is(err, unix.ESRCH) {
			return nil
		}
		return fmt.Errorf("open pidfd for %d: %w", pid, err)
	}
	defer unix.Close(fd)
	return fn(fd)
}

// waitFD waits until the pidfd reports the process ended, or timeout.
func waitFD(fd int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		left := time.Until(deadline)
		if left < 0 {
			left = 0
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(left.Milliseconds()))
		if err == nil {
			return n > 0
		}
		if !errors.Is(err, unix.EINTR) || left == 0 {
			return false
		}
	}
}
