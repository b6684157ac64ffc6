// Package exitcode classifies harness errors so that the CLI can exit with a
// code that tells a CI pipeline what went wrong without parsing messages.
//
// Spec failures and harness errors must never share a code: a red test is a
// finding about the cluster, a harness error is a finding about the setup.
package exitcode

import (
	"errors"
	"fmt"
	"strings"
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
	// ClaimsErrored: a claim's verdict is error (the harness could not
	// decide it: a bug of kubeproof or of a probe, not a finding about the
	// cluster). It fails every run, whatever the other flags say.
	ClaimsErrored Code = 13
	// LintFindings: a claims file has problems (claims lint, or run and
	// report with --claims-file): the file is wrong, the command was used
	// right.
	LintFindings Code = 14
	// Credentials: the cluster refused the kubeconfig's credentials (401).
	Credentials Code = 15
	// Interrupted: the user pressed Ctrl-C (128 + SIGINT, as shells do).
	Interrupted Code = 130
	// Terminated: SIGTERM, as a CI system sends when it cancels a job
	// (128 + SIGTERM).
	Terminated Code = 143
)

// Entry is one row of the exit code table: the code, its short name and
// what it means to a CI pipeline.
type Entry struct {
	Code    Code
	Name    string
	Meaning string
}

// Table is every code kubeproof exits with, in order: the one source of
// `kubeproof help exit-codes`, the root command's help and the tables of
// README.md and docs/ci.md (a test holds them to it).
var Table = []Entry{
	{OK, "ok", "everything ran; no spec failed, no claim is an error"},
	{SpecsFailed, "specs failed", "a spec failed (a finding about the cluster)"},
	{Usage, "usage error", "usage: unknown flag, command or provider, bad value"},
	{Permission, "permission denied", "permission: the local and kind providers need root"},
	{Conflict, "conflict", "conflict: a port, CIDR or cluster name is already taken"},
	{MissingTool, "missing tool", "missing tool: no Go toolchain, no apt-get, no Docker API, a program not built"},
	{Kubeconfig, "bad kubeconfig", "bad kubeconfig: missing, unreadable or invalid"},
	{Unreachable, "cluster unreachable", "cluster unreachable or not up"},
	{ClusterSetup, "cluster setup error", "cluster setup failed (a component did not start)"},
	{Internal, "internal error", "internal error"},
	{Refuted, "claims refuted", "with `--fail-on-refuted`: a documented claim was refuted"},
	{Forbidden, "forbidden", "forbidden: the kubeconfig's user lacks permissions every run needs (the error names them)"},
	{Registry, "registry error", "registry: unreachable, or it refused the push"},
	{ClaimsErrored, "claims in error", "a claim's verdict is `error`: kubeproof could not decide it (always; it comes before 1 and 10)"},
	{LintFindings, "claims file problems", "a claims file has problems (`claims lint`, or `run` and `report` with `--claims-file`)"},
	{Credentials, "credentials refused", "credentials refused: the cluster answered 401 to the kubeconfig's user"},
	{Interrupted, "interrupted", "interrupted (SIGINT, Ctrl-C): the run's cluster is removed, its report is partial"},
	{Terminated, "terminated", "terminated (SIGTERM, as a CI system cancels a job): as for 130"},
}

// String names the code for messages and docs.
func (c Code) String() string {
	for _, e := range Table {
		if e.Code == c {
			return e.Name
		}
	}
	return fmt.Sprintf("exit code %d", int(c))
}

// Markdown is Table as the Markdown table README.md and docs/ci.md carry.
func Markdown() string {
	var b strings.Builder
	b.WriteString("| code | meaning |\n| --- | --- |\n")
	for _, e := range Table {
		fmt.Fprintf(&b, "| %d | %s |\n", e.Code, e.Meaning)
	}
	return b.String()
}

// Text is Table for a terminal: a code and its meaning per line.
func Text() string {
	var b strings.Builder
	for _, e := range Table {
		fmt.Fprintf(&b, "  %3d  %s\n", e.Code, strings.ReplaceAll(e.Meaning, "`", ""))
	}
	return b.String()
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
