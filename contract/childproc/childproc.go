// Package childproc says how the programs kubeproof starts (kubectl,
// etcdctl, a command on a node) are tied to the process that starts them.
package childproc

import "syscall"

// Attr is the SysProcAttr of a child that must not outlive its parent: on
// Linux the kernel kills it when the parent dies (even by SIGKILL, which
// leaves no cleanup to run). Elsewhere there is no such tie; the child is
// ended by the context that started it.
func Attr() *syscall.SysProcAttr { return attr() }
