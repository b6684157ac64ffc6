package main

import (
	"fmt"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/dynamic"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/contract/ownership"
	"github.com/kubeproof/kubeproof/internal/exitcode"
)

func newCleanupCommand(o *options) *cobra.Command {
	var runID string
	var dryRun bool
	cmd := providerCommand(o, "cleanup", "Remove what kubeproof runs left in a cluster (by their label "+ownership.Label+")",
		func(cmd *cobra.Command, p cluster.Provider) error {
			ctx := cmd.Context()
			info, err := p.Info(ctx)
			if err != nil {
				return err
			}
			cfg, err := cluster.RESTConfig(info.Kubeconfig, info.Context)
			if err != nil {
				return err
			}
			client, err := dynamic.NewForConfig(cfg)
			if err != nil {
				return fmt.Errorf("make a client: %w", err)
			}
			found, err := ownership.Find(ctx, client, runID)
			if err != nil {
				// What could be listed is still removed; the rest is named.
				printer().Infof("some kinds could not be listed: %v", err)
			}
			for _, f := range found {
				fmt.Println(f)
			}
			if len(found) == 0 {
				printer().Infof("nothing of kubeproof's (selector %s) in cluster %q", ownership.Selector(runID), info.Name)
				return nil
			}
			if dryRun {
				printer().Infof("%d objects would be removed (--dry-run)", len(found))
				return nil
			}
			if err := ownership.Remove(ctx, client, found); err != nil {
				if apierrors.IsForbidden(err) {
					return exitcode.With(exitcode.Forbidden, err)
				}
				return err
			}
			printer().Infof("removed %d objects; namespaces finish terminating on their own", len(found))
			return nil
		})
	cmd.Long = `cleanup removes every object a kubeproof run left in the cluster: its namespaces and the
objects it makes outside them (simulated Nodes and their Leases, webhook configurations,
admission policies, the RBAC spec's ClusterRole and RoleBinding, CRDs, CSRs), all
labelled ` + ownership.Label + `=<run>. A run removes them itself; cleanup is for runs that were
killed. Use --run to remove one run's objects only.`
	cmd.Flags().StringVar(&runID, "run", "", "remove only the objects of this run (the value of their "+ownership.Label+" label)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "list what would be removed, remove nothing")
	return cmd
}
