// Package kubectl runs the real kubectl binary against a cluster, the way a
// user does, and returns what it printed.
package kubectl

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kubeproof/kubeproof/contract/childproc"
)

// Runner runs one kubectl binary with one kubeconfig.
type Runner struct {
	Path       string
	Kubeconfig string
	Context    string
	// Dir is the directory kubectl runs in (default: the caller's); the
	// files its arguments name are relative to it.
	Dir string
	// Env sets variables of kubectl's environment (NAME=value, after the
	// caller's); Unset removes variables of the caller's.
	Env   []string
	Unset []string
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
	cmd := k.command(ctx, args...)
	cmd.Stdin = stdin
	var out, errb bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errb
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

// command is kubectl with args, for this runner's cluster.
func (k Runner) command(ctx context.Context, args ...string) *exec.Cmd {
	var full []string
	if k.Context != "" {
		full = append(full, "--context", k.Context)
	}
	cmd := exec.CommandContext(ctx, k.Path, append(full, args...)...)
	// kubectl dies with the spec process that runs it: a run killed
	// outright (SIGKILL) must leave no kubectl behind (on Linux; see childproc).
	cmd.SysProcAttr = childproc.Attr()
	// kubectl must not pick up the user's own configuration when the run
	// has its own; without one it follows the user's, as we do. $KUBECONFIG
	// rather than --kubeconfig: it may be a list of files.
	cmd.Env = nil
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(k.Unset, name) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	if k.Kubeconfig != "" && !slices.Contains(k.Unset, "KUBECONFIG") {
		cmd.Env = append(cmd.Env, "KUBECONFIG="+k.Kubeconfig)
	}
	cmd.Env = append(cmd.Env, k.Env...)
	cmd.Dir = k.Dir
	return cmd
}

// Watch starts a kubectl that keeps printing (get --watch) and delivers
// its output lines as they come, each with the time it arrived; the
// channel closes when kubectl ends (when ctx is done, at the latest).
// stop ends it and returns what it wrote on standard error.
func (k Runner) Watch(ctx context.Context, args ...string) (lines <-chan Line, stop func() string, err error) {
	if k.Path == "" {
		return nil, nil, errors.New("no kubectl binary known for this cluster")
	}
	ctx, cancel := context.WithCancel(ctx)
	cmd := k.command(ctx, args...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		return nil, nil, fmt.Errorf("kubectl output: %w", err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, nil, fmt.Errorf("run kubectl: %w", err)
	}
	ch := make(chan Line)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case ch <- Line{Text: sc.Text(), At: time.Now()}:
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch, func() string {
		cancel()
		_ = cmd.Wait()
		return errb.String()
	}, nil
}

// Line is one line kubectl printed, and when it arrived.
type Line struct {
	Text string
	At   time.Time
}

// Exchange is one HTTP request kubectl made and the status it got, as its
// verbose log prints them (-v=8 quotes bodies and truncates them; -v=9
// prints them whole, and the request as a curl command).
type Exchange struct {
	Method      string
	URL         string
	Headers     map[string]string
	RequestBody string
	Status      string
}

// Exchanges parses the requests out of kubectl's -v=8 or -v=9 log (stderr).
func Exchanges(log string) []Exchange {
	var out []Exchange
	var body string
	lines := strings.Split(log, "\n")
	// block returns the tab-indented lines after a "key=<" line.
	block := func(i int) ([]string, int) {
		var b []string
		for i+1 < len(lines) && strings.HasPrefix(lines[i+1], "\t") {
			i++
			b = append(b, strings.TrimPrefix(lines[i], "\t"))
		}
		return b, i
	}
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.Contains(l, `"Request Body" body=<`):
			var b []string
			b, i = block(i)
			body = strings.Join(b, "\n")
		case strings.Contains(l, `"Request Body" body=`):
			body = unquoteAfter(l, `body=`)
		case strings.Contains(l, `"Request" curlCommand=<`):
			var b []string
			b, i = block(i)
			ex := parseCurl(strings.Join(b, " "))
			ex.RequestBody, body = body, ""
			out = append(out, ex)
		case strings.Contains(l, `"Request" verb=`):
			ex := Exchange{Method: unquoteAfter(l, `verb=`), URL: unquoteAfter(l, `url=`), Headers: map[string]string{}, RequestBody: body}
			body = ""
			var b []string
			b, i = block(i)
			for _, h := range b {
				if k, v, ok := strings.Cut(strings.TrimSpace(h), ": "); ok {
					ex.Headers[k] = v
				}
			}
			out = append(out, ex)
		case strings.Contains(l, `"Response" `) && strings.Contains(l, `status=`) && len(out) > 0 && out[len(out)-1].Status == "":
			out[len(out)-1].Status = unquoteAfter(l, `status=`)
		// Older kubectl (before structured logging): plain messages.
		case strings.Contains(l, "] Request Body: "):
			_, body, _ = strings.Cut(l, "] Request Body: ")
		case strings.Contains(l, "] curl -v -X"):
			_, cmd, _ := strings.Cut(l, "] ")
			ex := parseCurl(cmd)
			ex.RequestBody, body = body, ""
			out = append(out, ex)
		case len(out) > 0 && out[len(out)-1].Status == "" && plainResponse(l, out[len(out)-1]) != "":
			out[len(out)-1].Status = plainResponse(l, out[len(out)-1])
		// Older kubectl at -v=8: "] POST URL", "Request Headers:" and
		// its indented lines, then "Response Status: 201 Created in 9
		// milliseconds".
		case plainRequest.MatchString(l):
			m := plainRequest.FindStringSubmatch(l)
			out = append(out, Exchange{Method: m[1], URL: m[2], Headers: map[string]string{}, RequestBody: body})
			body = ""
		case plainHeader.MatchString(l) && len(out) > 0 && out[len(out)-1].Status == "":
			m := plainHeader.FindStringSubmatch(l)
			out[len(out)-1].Headers[m[1]] = m[2]
		case strings.Contains(l, "] Response Status: ") && len(out) > 0 && out[len(out)-1].Status == "":
			_, rest, _ := strings.Cut(l, "] Response Status: ")
			status, _, _ := strings.Cut(rest, " in ")
			out[len(out)-1].Status = strings.TrimSpace(status)
		}
	}
	return out
}

var (
	// plainRequest is an older kubectl's request line at -v=8 (method, URL).
	plainRequest = regexp.MustCompile(`\] (GET|POST|PUT|PATCH|DELETE|HEAD) (https?://\S+)$`)
	// plainHeader is one of the request's headers after "Request Headers:".
	plainHeader = regexp.MustCompile(`\]     ([A-Za-z][A-Za-z0-9-]*): (.*)$`)
)

// plainResponse reads "] POST https://... 201 Created in 9 milliseconds"
// for the request ex (older kubectl).
func plainResponse(l string, ex Exchange) string {
	_, rest, ok := strings.Cut(l, "] "+ex.Method+" "+ex.URL+" ")
	if !ok {
		return ""
	}
	status, _, ok := strings.Cut(rest, " in ")
	if !ok {
		return ""
	}
	return status
}

// parseCurl reads method, headers and URL from kubectl's curl rendering of
// a request: curl -v -XPOST -H "K: V" ... 'URL'.
func parseCurl(cmd string) Exchange {
	ex := Exchange{Method: "GET", Headers: map[string]string{}}
	if _, rest, ok := strings.Cut(cmd, "-X"); ok {
		ex.Method, _, _ = strings.Cut(rest, " ")
	}
	for _, part := range strings.Split(cmd, `-H "`)[1:] {
		h, _, _ := strings.Cut(part, `"`)
		if k, v, ok := strings.Cut(h, ": "); ok {
			ex.Headers[k] = v
		}
	}
	if i := strings.LastIndex(cmd, " '"); i >= 0 {
		ex.URL = strings.TrimSuffix(strings.TrimSpace(cmd[i+2:]), "'")
	}
	return ex
}

// unquoteAfter returns the quoted value after key= in a klog line.
func unquoteAfter(line, key string) string {
	_, rest, ok := strings.Cut(line, key)
	if !ok || !strings.HasPrefix(rest, `"`) {
		return ""
	}
	for i := 1; i < len(rest); i++ {
		if rest[i] == '\\' {
			i++
			continue
		}
		if rest[i] == '"' {
			if s, err := strconv.Unquote(rest[:i+1]); err == nil {
				return s
			}
			return rest[1:i]
		}
	}
	return ""
}
