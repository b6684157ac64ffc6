package controlplane

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"

	"github.com/kubeproof/kubeproof/internal/provision/internal/process"
)

// ExtraScheduler is a second kube-scheduler a provider runs beside its
// cluster's own: one profile, named Name, so that it schedules only the
// Pods whose spec.schedulerName is Name.
type ExtraScheduler struct {
	// Name is the profile's schedulerName.
	Name string
	// Binary is kube-scheduler's path; Kubeconfig reaches the cluster's API
	// server with rights to schedule (the cluster's admin credentials).
	Binary, Kubeconfig string
	// Dir is a directory of the cluster's own (down finds the process by
	// it on its command line); the configuration is written below it.
	Dir string
	// Host is the address it serves /healthz on (a free port is taken).
	Host string
	// Args are more flags, which win.
	Args []string
	// Log receives its output.
	Log string
}

// StartScheduler starts the scheduler, waits until it answers /healthz,
// and returns what stops it (and removes its directory).
func StartScheduler(ctx context.Context, s ExtraScheduler) (func() error, error) {
	dir := filepath.Join(s.Dir, "extra-scheduler-"+s.Name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("extra scheduler %s: %w", s.Name, err)
	}
	config := map[string]any{
		"apiVersion":       "kubescheduler.config.k8s.io/v1",
		"kind":             "KubeSchedulerConfiguration",
		"clientConnection": map[string]any{"kubeconfig": s.Kubeconfig},
		// One of it, beside the cluster's own, which holds its own lease.
		"leaderElection": map[string]any{"leaderElect": false},
		"profiles":       []any{map[string]any{"schedulerName": s.Name}},
	}
	data, err := yaml.Marshal(config)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return nil, fmt.Errorf("extra scheduler %s: %w", s.Name, err)
	}
	port, err := FreePort(s.Host)
	if err != nil {
		return nil, err
	}
	args := Override([]string{s.Binary, "--config=" + path,
		"--authentication-kubeconfig=" + s.Kubeconfig, "--authorization-kubeconfig=" + s.Kubeconfig,
		"--bind-address=" + s.Host, "--secure-port=" + strconv.Itoa(port)}, s.Args)
	proc, err := process.Start("kube-scheduler-"+s.Name, args, s.Log, nil)
	if err != nil {
		return nil, err
	}
	stop := func() error {
		err := proc.Stop(15 * time.Second)
		_ = os.RemoveAll(dir)
		return err
	}
	if err := waitHealthz(ctx, "https://"+net.JoinHostPort(s.Host, strconv.Itoa(port))+"/healthz", proc); err != nil {
		_ = stop()
		return nil, fmt.Errorf("extra scheduler %s: %w", s.Name, err)
	}
	return stop, nil
}

// waitHealthz polls url until it answers "ok" or proc exits: a component
// that is starting has no watch to offer. Its serving certificate is
// self-signed in memory; the answer's content is what is checked.
func waitHealthz(ctx context.Context, url string, proc *process.Proc) error {
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	last := ""
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, ReadyTimeout, true, func(ctx context.Context) (bool, error) {
		select {
		case <-proc.Exited():
			return false, fmt.Errorf("exited (%v); last log lines:\n%s", proc.Err(), process.Tail(proc.Log, 5))
		default:
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		resp, err := client.Do(req)
		if err != nil {
			last = err.Error()
			return false, nil
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		last = fmt.Sprintf("HTTP %d %s", resp.StatusCode, body)
		return resp.StatusCode == http.StatusOK && string(body) == "ok", nil
	})
	if err != nil && wait.Interrupted(err) && ctx.Err() == nil {
		return fmt.Errorf("timed out after %s waiting for %s; last seen: %s", ReadyTimeout, url, last)
	}
	return err
}
