package main

import (
	"context"
	"fmt"

	"github.com/kubeproof/kubeproof/framework/access"
	"github.com/kubeproof/kubeproof/framework/cluster"
	"github.com/kubeproof/kubeproof/framework/identity"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/progress"
)

// preflight asks the API server what the kubeconfig's user may do, before
// any spec runs: without namespaces nothing can run (a one-line error);
// without another permission the specs that need it will be not checkable,
// which it says now. The permissions needed inside the run's namespaces
// are asked again by the canary, in one of them.
func preflight(ctx context.Context, info *cluster.Info, pr *progress.Printer) error {
	cfg, client, err := cluster.NewClient(info.Kubeconfig, info.Context)
	if err != nil {
		return err
	}
	user := "the kubeconfig's user"
	if who, err := identity.WhoAmI(ctx, cfg); err == nil && who.Username != "" {
		user = fmt.Sprintf("the kubeconfig's user (%s)", who.Username)
	}
	results, err := access.Check(ctx, client, "", access.All)
	if err != nil {
		pr.Infof("could not check what %s may do (%v): the specs will find out", user, err)
		return nil
	}
	for _, r := range results {
		if r.Allowed {
			continue
		}
		if r.Permission == access.Namespaces {
			return exitcode.Errorf(exitcode.Forbidden, "%s may not create namespaces, which every spec needs%s", user, reasonOf(r))
		}
		pr.Infof("%s may not %s%s: %s will be not checkable", user, r.Permission, reasonOf(r), r.Permission.For)
	}
	return nil
}

func reasonOf(r access.Result) string {
	if r.Reason == "" {
		return ""
	}
	return " (" + r.Reason + ")"
}
