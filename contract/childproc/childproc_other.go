//go:build !linux

package childproc

import "syscall"

// Darwin and the BSDs have no parent-death signal.
func attr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
