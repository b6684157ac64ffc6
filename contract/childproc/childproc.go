// Package childproc says how the programs kubeproof starts (kubectl,
// etcdctl, a command on a node) are tied to the process that starts them.
package childproc

import "syscall"

// Attr is the SysProcAttr of a child that must not outlive its parent: on
// Linux the kernel kills it when the parent dies (even by SIGKILL, which
// leaves no cleanup to run). Elsewhere there is no such tie; the child is
// ended by the context that started it.
//
// Strictly, Linux signals the child when the thread that started it exits,
// not the process. Go keeps its threads for the life of the process except
// one whose goroutine exits while locked to it (runtime.LockOSThread), so
// a child must not be started from such a goroutine. kubeproof's one
// locked goroutine (the local provider's setup inside the node's network
// namespace) writes sysctls and starts no child.
func Attr() *syscall.SysProcAttr { return attr() }
