package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/progress"
	"github.com/kubeproof/kubeproof/internal/provision"
)

// The cluster contract knows no exit codes: its connection errors are
// typed, and these are the codes the commands exit with for them.
func init() {
	exitcode.Classify(cluster.ErrKubeconfig, exitcode.Kubeconfig)
	exitcode.Classify(cluster.ErrUnreachable, exitcode.Unreachable)
	exitcode.Classify(cluster.ErrCredentials, exitcode.Credentials)
}

// Printer is where progress goes: stderr, so that stdout stays parseable.
func Printer() *progress.Printer { return progress.New(os.Stderr) }

// NewProvider makes the provider the request names. A cluster that a
// killed kubeproof command left behind is removed first, saying so.
func NewProvider(ctx context.Context, r provision.Request, pr *progress.Printer) (cluster.Provider, error) {
	r.Progress = pr
	p, err := r.New()
	if err != nil {
		return nil, err
	}
	if err := reapAbandoned(ctx, p, pr); err != nil {
		return nil, err
	}
	return p, nil
}

// reapAbandoned removes the provider's cluster if a kubeproof command that
// was killed before it could remove it left it behind.
func reapAbandoned(ctx context.Context, p cluster.Provider, pr *progress.Printer) error {
	a, ok := p.(cluster.Abandoner)
	if !ok {
		return nil
	}
	who, abandoned := a.Abandoned()
	if !abandoned {
		return nil
	}
	pr.Infof("the %s cluster here was left by %s, which was killed before it could remove it: removing it first", p.Name(), who)
	if err := p.Down(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("remove the cluster a killed kubeproof left: %w", err)
	}
	return nil
}

// ClusterFor returns the info of the cluster the provider names, bringing
// it up first if the provider makes clusters and it is not up; down then
// removes it again unless keep is set (and does nothing otherwise).
// removes says whether down removes the cluster.
func ClusterFor(ctx context.Context, r provision.Request, p cluster.Provider, keep bool) (info *cluster.Info, down func() error, removes bool, err error) {
	nothing := func() error { return nil }
	info, err = p.Info(ctx)
	if err == nil {
		return info, nothing, false, nil
	}
	if !r.Makes() {
		return nil, nothing, false, err
	}
	Printer().Infof("cluster %q is not up (%v): bringing it up", r.Shape.Name, err)
	if info, err = p.Up(ctx); err != nil {
		return nil, nothing, false, err
	}
	if keep {
		return info, nothing, false, nil
	}
	return info, func() error { return p.Down(context.WithoutCancel(ctx)) }, true, nil
}

// ExportLogs copies the cluster's component logs into the report
// directory, for providers that can.
func ExportLogs(ctx context.Context, p cluster.Provider, reportDir string) {
	le, ok := p.(cluster.LogExporter)
	if !ok {
		return
	}
	dir := filepath.Join(reportDir, "logs")
	if err := le.ExportLogs(ctx, dir); err != nil {
		fmt.Fprintf(os.Stderr, "kubeproof: could not export cluster logs: %v\n", err)
		return
	}
	fmt.Fprintf(os.Stderr, " • cluster logs for the failure are in %s\n", dir)
}
