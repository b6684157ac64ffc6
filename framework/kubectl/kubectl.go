// Package kubectl runs the real kubectl binary against a cluster, the way a
// user does, and returns what it printed.
package kubectl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// Runner runs one kubectl binary with one kubeconfig.
type Runner struct {
	Path       string
	Kubeconfig string
	Context    string
}

// Result is what one kubectl invocation did.
type Result struct {
	Args     []string
	Stdout   string
	Stderr   string
	ExitCode int
}

// String renders the invocation for evidence and failure messages.
func (r Result) String() string {
	return fmt.Sprintf("kubectl %s -> exit %d; stdout: %q; stderr: %q", strings.Join(r.Args, " "), r.ExitCode, r.Stdout, r.Stderr)
}

// Run runs kubectl with args (and stdin, if not nil). A non-zero exit is not
// an error: the caller judges the result. Err is for kubectl not running.
func (k Runner) Run(ctx context.Context, stdin io.Reader, args ...string) (Result, error) {
	if k.Path == "" {
		return Result{}, errors.New("no kubectl binary known for this cluster")
	}
	full := []string{"--kubeconfig", k.Kubeconfig}
	if k.Context != "" {
		full = append(full, "--context", k.Context)
	}
	full = append(full, args...)
	cmd := exec.CommandContext(ctx, k.Path, full...)
	cmd.Stdin = stdin
	var out, errb bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errb
	// kubectl must not pick up the user's own configuration.
	cmd.Env = append(os.Environ(), "KUBECONFIG="+k.Kubeconfig)
	err := cmd.Run()
	res := Result{Args: args, Stdout: out.String(), Stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.ExitCode = ee.ExitCode()
	default:
		return res, fmt.Errorf("run kubectl: %w", err)
	}
	return res, nil
}
