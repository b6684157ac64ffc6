package local

import (
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// inNetns runs fn on an OS thread that has joined the namespace at path.
// The thread is returned to the host namespace afterwards; if that fails, it
// is left locked so the Go runtime discards it instead of reusing it.
func inNetns(path string, fn func() error) error {
	runtime.LockOSThread()
	orig, err := os.Open(fmt.Sprintf("/proc/%d/task/%d/ns/net", os.Getpid(), unix.Gettid()))
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("open current network namespace: %w", err)
	}
	defer orig.Close()
	target, err := os.Open(path)
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("open network namespace %s: %w", path, err)
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("enter network namespace %s: %w", path, err)
	}
	ferr := fn()
	if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("leave network namespace %s: %w", path, err)
	}
	runtime.UnlockOSThread()
	return ferr
}

// nsInode identifies a namespace file (0 if it does not exist).
func nsInode(path string) uint64 {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0
	}
	return st.Ino
}
