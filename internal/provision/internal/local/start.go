package local

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/internal/provision/internal/binaries"
	"github.com/kubeproof/kubeproof/internal/provision/internal/bringup"
	"github.com/kubeproof/kubeproof/internal/provision/internal/process"
)

// starter starts components, records them in the state file, and waits for
// them to become ready.
type starter struct {
	mu    sync.Mutex
	st    *state
	l     layout
	steps *bringup.Steps
	procs map[string]*process.Proc
}

func (s *starter) start(comp component) (*process.Proc, error) {
	proc, err := process.Start(comp.name, comp.args, s.l.log(comp.name), comp.env)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.procs[comp.name] = proc
	s.st.Processes = append(s.st.Processes, proc.Record)
	if err := s.st.save(s.l.stateFile()); err != nil {
		return nil, err
	}
	return proc, nil
}

// ready records that comp became ready and prints it.
func (s *starter) ready(name string, started time.Time) { s.readyAs(name, name, started) }

// readyAs records a step named name that process proc made ready (the
// kubelet's step is its node turning Ready).
func (s *starter) readyAs(name, proc string, started time.Time) {
	s.mu.Lock()
	cs := cluster.ComponentStatus{Name: name, Started: started, ReadyIn: time.Since(started), Log: s.l.log(proc), Process: proc}
	if p, ok := s.procs[proc]; ok {
		cs.PID = p.PID
	}
	s.mu.Unlock()
	s.steps.Record(cs)
}

// waitReady polls check until it passes, the process exits, or timeout. A
// component has no watch to offer, so its health endpoint is asked every
// 100 ms; the error says what was awaited and what was seen last.
func (s *starter) waitReady(ctx context.Context, name string, timeout time.Duration, check func(context.Context) (string, error)) error {
	s.mu.Lock()
	proc := s.procs[name]
	s.mu.Unlock()
	var lastSeen string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if proc != nil {
			select {
			case <-proc.Exited():
				return false, fmt.Errorf("%s exited during startup (%v); last log lines:\n%s", name, proc.Err(), process.Tail(proc.Log, 5))
			default:
			}
		}
		seen, err := check(ctx)
		if err != nil {
			lastSeen = err.Error()
			return false, nil
		}
		lastSeen = seen
		return true, nil
	})
	if err != nil && ctx.Err() == nil && wait.Interrupted(err) {
		msg := fmt.Sprintf("timed out after %s waiting for %s to become ready; last seen: %s", timeout, name, lastSeen)
		if proc != nil {
			msg += fmt.Sprintf("; log %s ends with:\n%s", proc.Log, process.Tail(proc.Log, 5))
		}
		return fmt.Errorf("%s", msg)
	}
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// ctr runs containerd's CLI (of the cluster's containerd release) against
// the cluster's containerd.
func ctr(ctx context.Context, bin binaries.Set, l layout, args ...string) (string, error) {
	full := append([]string{"--address", l.containerdSock(), "--namespace", "k8s.io"}, args...)
	out, err := exec.CommandContext(ctx, bin.Path("ctr"), full...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("ctr %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

func importImages(ctx context.Context, bin binaries.Set, l layout, tars map[string]string) error {
	for ref, tar := range tars {
		if _, err := ctr(ctx, bin, l, "images", "import", tar); err != nil {
			return fmt.Errorf("load image %s: %w", ref, err)
		}
	}
	return nil
}

func etcdHealthy(c Config, m etcdMember) func(context.Context) (string, error) {
	url := fmt.Sprintf("http://%s/health", net.JoinHostPort(c.network().hostIP.String(), strconv.Itoa(m.metrics)))
	return func(ctx context.Context) (string, error) {
		body, err := httpGet(ctx, http.DefaultClient, url)
		if err != nil {
			return "", err
		}
		var h struct{ Health string }
		if json.Unmarshal([]byte(body), &h) != nil || h.Health != "true" {
			return "", fmt.Errorf("etcd /health: %s", body)
		}
		return body, nil
	}
}

func apiServerReady(admin kubernetes.Interface) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		body, err := admin.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err != nil {
			return "", fmt.Errorf("/readyz: %v %s", err, truncate(string(body), 300))
		}
		return string(body), nil
	}
}

// insecureClient checks the health endpoints of the controller manager and
// scheduler, whose serving certificates are self-signed in memory; the
// endpoint's content, not its certificate, is what is checked.
var insecureClient = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}

func httpsHealthy(hostPort string) func(context.Context) (string, error) {
	url := "https://" + hostPort + "/healthz"
	return func(ctx context.Context) (string, error) { return httpGet(ctx, insecureClient, url) }
}

func httpHealthy(url string) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) { return httpGet(ctx, http.DefaultClient, url) }
}

func httpGet(ctx context.Context, client *http.Client, url string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: HTTP %d: %s", url, resp.StatusCode, truncate(string(body), 200))
	}
	return strings.TrimSpace(string(body)), nil
}
