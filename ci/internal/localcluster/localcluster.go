// Package localcluster brings up a local kubeproof cluster for the ci/
// harnesses that play "your cluster" (ci/actcheck, ci/quickstart): the
// harness reaches it only through the kubeconfig handed back, as a user of
// the kubeconfig provider would.
package localcluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Up runs `kubeproof up --name NAME FLAGS...` (flags give the cluster its
// own ports and CIDRs, so that it stands beside others) and returns its
// kubeconfig, read through `kubeproof env`. down removes the cluster; it is
// there also when Up fails (a half-made cluster is removed the same way),
// and the caller runs it once it is done.
func Up(ctx context.Context, kubeproof, name string, flags ...string) (kubeconfig []byte, down func() error, err error) {
	down = func() error {
		cmd := exec.Command(kubeproof, "down", "--name", name)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("kubeproof down --name %s: %w", name, err)
		}
		return nil
	}
	up := exec.CommandContext(ctx, kubeproof, append([]string{"up", "--name", name}, flags...)...)
	up.Stdout, up.Stderr = os.Stdout, os.Stderr
	if err := up.Run(); err != nil {
		return nil, down, fmt.Errorf("kubeproof up --name %s: %w", name, err)
	}
	env, err := exec.CommandContext(ctx, kubeproof, "env", "--name", name).Output()
	if err != nil {
		return nil, down, fmt.Errorf("kubeproof env --name %s: %w", name, err)
	}
	path := kubeconfigOf(string(env))
	if path == "" {
		return nil, down, fmt.Errorf("kubeproof env --name %s printed no KUBECONFIG: %q", name, env)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, down, fmt.Errorf("the cluster's kubeconfig: %w", err)
	}
	return data, down, nil
}

// kubeconfigOf is the path of `export KUBECONFIG=...` in kubeproof env's
// output (shell-quoted).
func kubeconfigOf(env string) string {
	for _, l := range strings.Split(env, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimPrefix(l, "export "), "KUBECONFIG="); ok {
			return strings.Trim(v, `'"`)
		}
	}
	return ""
}
