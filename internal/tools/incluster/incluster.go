// Package incluster runs kubeproof inside the cluster it checks (`kubeproof
// run --in-cluster`), as sonobuoy and hydrophone run their suites: for an
// API server reachable only from inside, or a run that must outlive the
// connection of the machine that started it.
//
// The run outside (Run) checks that its user may grant what the run
// inside needs, puts kubeproof's own image where the nodes pull it, and
// makes, all labelled with the run's ID: a namespace, a ServiceAccount, a
// ClusterRole with its binding, a ConfigMap of the user's files, and a
// Job whose one Pod runs `kubeproof run` with the same selection. It
// streams the run's output, copies its report directory back, and removes
// everything it made, also after Ctrl-C (the first asks the run inside to
// stop and still copies its partial report; the second skips the copy).
//
// The run inside (Agent) reaches the API server with the Pod's
// ServiceAccount, through the kubeconfig provider: what the run outside
// knew of the nodes holds there too (their images), what it reached from
// outside (the audit log, etcd, the nodes) does not, each named as missing
// because kubeproof runs in a Pod.
package incluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/contract/ownership"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/progress"
	"github.com/kubeproof/kubeproof/internal/provision"
	"github.com/kubeproof/kubeproof/internal/report"
	"github.com/kubeproof/kubeproof/internal/runner"
	"github.com/kubeproof/kubeproof/kube/namespace"
)

// Options are a run inside the cluster, as the run outside starts it.
type Options struct {
	// Plan is the run as `kubeproof run` planned it here: its cluster,
	// selection and report directory.
	Plan runner.Plan
	// Args are `kubeproof run`'s arguments inside: the selection and how
	// the specs run, file paths as PodPath gives them.
	Args []string
	// Files are the user's files the run inside reads.
	Files []File
	// RunID names the run inside: the Ginkgo seed its Args give, the value
	// of the ownership label on everything it and this run make.
	RunID string
	// Tag is the tag of kubeproof's images in the registry: its version
	// as an image tag (buildinfo.ImageTag).
	Tag string
}

// Kubeconfig is the file the run inside reaches the API server with: the
// Pod's ServiceAccount token and CA, written when it starts.
const Kubeconfig = "/tmp/kubeproof/kubeconfig"

// Timeouts of the run outside.
const (
	// startTimeout bounds the wait for the Pod to start (kubeproof's image
	// pulled, a node found).
	startTimeout = 5 * time.Minute
	// stopTimeout bounds the wait for the run inside to stop after an
	// interrupt: its specs remove their namespaces first.
	stopTimeout = 4 * time.Minute
	// removeTimeout bounds the removal of what the run made.
	removeTimeout = 4 * time.Minute
)

// Run runs the plan in a Pod of its cluster and returns the report it
// copied back. The exit code of the run inside is the error's (with
// runner.ErrReported: its output said why).
func Run(ctx context.Context, o Options) (rep report.Report, err error) {
	pr := runner.Printer()
	plan := o.Plan
	req := plan.Cluster
	req.Shape.Ephemeral = !plan.Keep
	p, err := runner.NewProvider(ctx, req, pr)
	if err != nil {
		return rep, err
	}
	files, secrets, err := carry(o.Files)
	if err != nil {
		return rep, err
	}
	releases := provision.Releases{KubernetesVersion: req.Shape.KubernetesVersion, EtcdVersion: req.Shape.EtcdVersion, CacheDir: req.Shape.CacheDir}
	// kubeproof's image reaches the nodes through the registry, or is
	// loaded into the nodes of a cluster kubeproof made, beside its other
	// images.
	// Both carry the CLI's version as their tag (o.Tag), as a release
	// publishes them; the run inside takes the images the specs run at
	// that tag (it is the same kubeproof).
	registry := req.Shape.ImageRegistry
	push := func() (image string, err error) {
		if registry == "" {
			return "", nil
		}
		if err := provision.PushWorkloads(ctx, req.Shape.CacheDir, registry, o.Tag, req.Shape.InsecureRegistry, pr); err != nil {
			return "", err
		}
		return provision.PushCLIImage(ctx, releases, registry, o.Tag, req.Shape.InsecureRegistry, pr)
	}
	// A cluster kubeproof makes is made once the registry took the
	// images; on one that exists, the user's permissions are asked first,
	// so that a user who may not start the run changes nothing anywhere.
	var image string
	if req.Makes() {
		if image, err = push(); err != nil {
			return rep, err
		}
	}
	info, down, _, err := runner.ClusterFor(ctx, req, p, plan.Keep)
	if err != nil {
		return rep, err
	}
	defer func() {
		if derr := down(); derr != nil && err == nil {
			err = derr
		}
	}()
	cfg, client, err := cluster.NewClient(info.Kubeconfig, info.Context)
	if err != nil {
		return rep, err
	}
	in := &inside{names: namesOf(o.RunID), cfg: cfg, client: client, pr: pr}
	if err := in.checkAccess(ctx, client, runner.UserOf(ctx, cfg), len(secrets) > 0); err != nil {
		return rep, err
	}
	if !req.Makes() {
		if image, err = push(); err != nil {
			return rep, err
		}
	}
	if registry == "" {
		if !info.Has(cluster.LoadImage) {
			return rep, exitcode.Errorf(exitcode.Usage, "run --in-cluster needs --image-registry, a registry the nodes pull kubeproof's image from: %s", info.Missing(cluster.LoadImage))
		}
		if image, err = provision.LoadCLIImage(ctx, p, releases, pr); err != nil {
			return rep, err
		}
	}
	job := Job{Cluster: info.Name, Provider: info.Provider, LoadedImages: info.Has(cluster.LoadImage), Disposable: info.Has(cluster.Disposable)}
	// What is made is removed whatever happens next, also after Ctrl-C.
	defer func() {
		if rerr := in.remove(context.WithoutCancel(ctx)); rerr != nil && err == nil {
			err = rerr
		}
	}()
	deadline := int64((plan.Specs.Timeout + startTimeout + stopTimeout).Seconds())
	if err := in.create(ctx, job, image, o.Args, files, secrets, deadline); err != nil {
		return rep, err
	}
	code, err := in.follow(ctx, image, plan.Specs.Timeout)
	if err != nil {
		return rep, err
	}
	if runner.InterruptsOf(ctx).SkipReport() {
		return rep, ctx.Err()
	}
	if err := in.retrieve(context.WithoutCancel(ctx), plan.ReportDir); err != nil {
		return rep, err
	}
	rep, lerr := report.Load(plan.ReportDir)
	if ctx.Err() != nil {
		return rep, ctx.Err()
	}
	if code != exitcode.OK {
		return rep, exitcode.With(code, runner.ErrReported)
	}
	return rep, lerr
}

// inside is one run inside the cluster, as the run outside drives it.
type inside struct {
	names
	cfg    *rest.Config
	client kubernetes.Interface
	pr     *progress.Printer
	// made: something was created (remove has work).
	made bool
	// pod is the Job's Pod, once it is known.
	pod string
}

// create makes the run's objects, the Job last.
func (in *inside) create(ctx context.Context, job Job, image string, args []string, files, secrets []carried, deadline int64) error {
	jobCM, err := in.jobConfigMap(job)
	if err != nil {
		return err
	}
	in.made = true
	core, rbac := in.client.CoreV1(), in.client.RbacV1()
	steps := []struct {
		what string
		make func() error
	}{
		{"namespace " + in.namespace, func() error {
			_, err := core.Namespaces().Create(ctx, in.namespaceObject(), metav1.CreateOptions{})
			return err
		}},
		{"ServiceAccount " + serviceAccount, func() error {
			_, err := core.ServiceAccounts(in.namespace).Create(ctx, in.serviceAccount(), metav1.CreateOptions{})
			return err
		}},
		{"ClusterRole " + in.role, func() error {
			_, err := rbac.ClusterRoles().Create(ctx, in.clusterRole(), metav1.CreateOptions{})
			return err
		}},
		{"ClusterRoleBinding " + in.role, func() error {
			_, err := rbac.ClusterRoleBindings().Create(ctx, in.clusterRoleBinding(), metav1.CreateOptions{})
			return err
		}},
		{"ConfigMap " + jobConfigMap, func() error {
			_, err := core.ConfigMaps(in.namespace).Create(ctx, jobCM, metav1.CreateOptions{})
			return err
		}},
		{"ConfigMap " + filesConfigMap, func() error {
			if len(files) == 0 {
				return nil
			}
			_, err := core.ConfigMaps(in.namespace).Create(ctx, in.filesConfigMap(files), metav1.CreateOptions{})
			return err
		}},
		{"Secret " + pullSecret, func() error {
			if len(secrets) == 0 {
				return nil
			}
			_, err := core.Secrets(in.namespace).Create(ctx, in.pullSecret(secrets), metav1.CreateOptions{})
			return err
		}},
		{"Job " + jobName, func() error {
			_, err := in.client.BatchV1().Jobs(in.namespace).Create(ctx, in.job(image, args, files, secrets, deadline), metav1.CreateOptions{})
			return err
		}},
	}
	for _, s := range steps {
		if err := s.make(); err != nil {
			return apiError("create "+s.what, err)
		}
	}
	in.pr.Infof("started kubeproof in the cluster: Job %s/%s (run %s), image %s", in.namespace, jobName, in.runID, image)
	return nil
}

// apiError gives an API error its exit code: a refusal is Forbidden.
func apiError(what string, err error) error {
	if apierrors.IsForbidden(err) {
		return exitcode.Errorf(exitcode.Forbidden, "%s: %v", what, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// retrieve copies the report directory out of the reports container into
// dir.
func (in *inside) retrieve(ctx context.Context, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return exitcode.Errorf(exitcode.Usage, "report directory: %v", err)
	}
	// A report of an earlier run in dir must not pass for this one's.
	_ = os.Remove(filepath.Join(dir, runner.SpecsReportName))
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	var n int
	go func() {
		var uerr error
		n, uerr = Unpack(r, dir)
		r.Close()
		done <- uerr
	}()
	xerr := execIn(ctx, in.cfg, in.client, in.namespace, in.pod, reportsContainer, []string{binDir + "/kubeproof", "report", "pack", ReportDir}, w)
	w.Close()
	uerr := <-done
	if err := errors.Join(xerr, uerr); err != nil {
		return fmt.Errorf("copy the reports out of Pod %s/%s: %w", in.namespace, in.pod, err)
	}
	in.pr.Infof("copied the run's report directory out of the cluster: %d files in %s", n, dir)
	return nil
}

// remove deletes what the run made and what the run inside left (all
// labelled with the run's ID): the Pod first, whose run gets its grace
// period to remove its specs' namespaces, then everything labelled, and
// waits until the namespaces are gone.
func (in *inside) remove(ctx context.Context) error {
	if !in.made {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, removeTimeout)
	defer cancel()
	fg := metav1.DeletePropagationBackground
	err := in.client.BatchV1().Jobs(in.namespace).Delete(ctx, jobName, metav1.DeleteOptions{PropagationPolicy: &fg})
	if err != nil && !apierrors.IsNotFound(err) {
		in.pr.Infof("could not delete Job %s/%s: %v", in.namespace, jobName, err)
	}
	if err := in.podsGone(ctx); err != nil {
		in.pr.Infof("%v", err)
	}
	dyn, err := dynamic.NewForConfig(in.cfg)
	if err != nil {
		return fmt.Errorf("remove what the run in the cluster made: %w", err)
	}
	// What the specs left (a run inside stopped by a second Ctrl-C), then
	// what this run made.
	var found []ownership.Found
	for _, id := range []string{in.runID, in.owner} {
		f, ferr := ownership.Find(ctx, dyn, id)
		if ferr != nil {
			in.pr.Infof("some kinds could not be listed (%v): kubeproof cleanup --run %s removes what is left", ferr, id)
		}
		if err := ownership.Remove(ctx, dyn, f); err != nil {
			return fmt.Errorf("remove what the run in the cluster made (kubeproof cleanup --run %s removes the rest): %w", id, err)
		}
		found = append(found, f...)
	}
	for _, id := range []string{in.runID, in.owner} {
		if err := namespace.AllGone(ctx, in.client, ownership.Selector(id), removeTimeout); err != nil {
			return fmt.Errorf("remove what the run in the cluster made: %w", err)
		}
	}
	var what []string
	for _, f := range found {
		what = append(what, f.Resource.Resource+" "+f.Name)
	}
	in.pr.Infof("removed what the run in the cluster made: %s", strings.Join(what, ", "))
	return nil
}
