// Package exitcode classifies harness errors so that the CLI can exit with a
// code that tells a CI pipeline what went wrong without parsing messages.
//
// Spec failures and harness errors must never share a code: a red test is a
// finding about the cluster, a harness error is a finding about the setup.
package exitcode

import (
	"errors"
	"fmt"
	"sync"
)

// Code is a process exit status.
type Code int

const (
	OK Code = 0
	// SpecsFailed: everything ran and at least one spec failed.
	SpecsFailed Code = 1
	// Usage: a wrong flag, argument or provider name.
	Usage Code = 2
	// Permission: the command needs privileges it does not have (root).
	Permission Code = 3
	// Conflict: something the cluster needs is taken (a port, a name, a CIDR).
	Conflict Code = 4
	// MissingTool: a program kubeproof needs is not installed (go, apt-get, ip).
	MissingTool Code = 5
	// Kubeconfig: the kubeconfig is unreadable or invalid.
	Kubeconfig Code = 6
	// Unreachable: the cluster a kubeconfig points at does not answer.
	Unreachable Code = 7
	// ClusterSetup: bringing a cluster up or down failed.
	ClusterSetup Code = 8
	// Internal: any other harness error.
	Internal Code = 9
	// Refuted: with --fail-on-refuted, a documented claim was refuted.
	Refuted Code = 10
	// Forbidden: the kubeconfig's user may not do what kubeproof needs to
	// (create namespaces, Pods).
	Forbidden Code = 11
	// Registry: a registry could not be reached or refused a push.
	Registry Code = 12
	// Credentials: the cluster refused the kubeconfig's credentials (401).
	// 13 and 14 are the claims' codes (an error verdict, a claims file's problems).
	Credentials Code = 15
	// Interrupted: the user pressed Ctrl-C (128 + SIGINT, as shells do).
	Interrupted Code = 130
	// Terminated: SIGTERM, as a CI system sends when it cancels a job
	// (128 + SIGTERM).
	Terminated Code = 143
)

// String names the code for messages and docs.
func (c Code) String() string {
	switch c {
	case OK:
		return "ok"
	case SpecsFailed:
		return "specs failed"
	case Usage:
		return "usage error"
	case Permission:
		return "permission denied"
	case Conflict:
		return "conflict"
	case MissingTool:
		return "missing tool"
	case Kubeconfig:
		return "bad kubeconfig"
	case Unreachable:
		return "cluster unreachable"
	case ClusterSetup:
		return "cluster setup error"
	case Internal:
		return "internal error"
	case Refuted:
		return "claims refuted"
	case Forbidden:
		return "forbidden"
	case Registry:
		return "registry error"
	case Credentials:
		return "credentials refused"
	case Interrupted:
		return "interrupted"
	case Terminated:
		return "terminated"
	}
	return fmt.Sprintf("exit code %d", int(c))
}

type codedError struct {
	code Code
	err  error
}

func (e *codedError) Error() string { return e.err.Error() }
func (e *codedError) Unwrap() error { return e.err }

// With marks err with code. Wrapping it further with fmt.Errorf("...: %w")
// keeps the code. A nil err stays nil.
func With(code Code, err error) error {
	if err == nil {
		return nil
	}
	return &codedError{code: code, err: err}
}

// Errorf is fmt.Errorf followed by With.
func Errorf(code Code, format string, args ...any) error {
	return With(code, fmt.Errorf(format, args...))
}

// Of returns the code err was marked with (the outermost mark wins), else
// the code of the first class it is of (see Classify), else Internal; OK
// for nil.
func Of(err error) Code {
	if err == nil {
		return OK
	}
	var ce *codedError
	if errors.As(err, &ce) {
		return ce.code
	}
	classesMu.Lock()
	defer classesMu.Unlock()
	for _, c := range classes {
		if errors.Is(err, c.target) {
			return c.code
		}
	}
	return Internal
}

// class is an error of a package that knows no exit codes, and its code.
type class struct {
	target error
	code   Code
}

var (
	classesMu sync.Mutex
	classes   []class
)

// Classify gives errors that are target (errors.Is) the code, unless they
// are marked: packages that must not know exit codes (the cluster
// contract) return typed errors, and the CLI says once what each means.
func Classify(target error, code Code) {
	classesMu.Lock()
	defer classesMu.Unlock()
	classes = append(classes, class{target: target, code: code})
}
