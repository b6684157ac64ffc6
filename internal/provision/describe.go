package provision

import (
	"fmt"
	"os"
	"strings"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/internal/buildinfo"
)

// RegistryEnv names the registry path of kubeproof's published images (a
// mirror of the release's, say), for the runs on a cluster kubeproof did
// not make; it stands before the registry the release stamped in.
const RegistryEnv = "KUBEPROOF_IMAGE_REGISTRY"

// PublishedImages is where kubeproof's published images are: $RegistryEnv,
// else the registry this release pushed them to (none in a build no
// release made).
func PublishedImages() Published {
	if r := strings.TrimSuffix(os.Getenv(RegistryEnv), "/"); r != "" {
		return Published{Registry: r, From: "$" + RegistryEnv}
	}
	if r := buildinfo.ReleaseRegistry(); r != "" {
		return Published{Registry: r, From: "the registry kubeproof " + buildinfo.Version() + " was published to"}
	}
	return Published{}
}

// Describe says in one line which cluster the request names and why, as
// a run says it first: `kubectl's current context "kind-x" in
// /home/u/.kube/config (https://127.0.0.1:35001; invoked as kubectl
// kubeproof)`, or `local cluster "kubeproof", processes on this machine
// (the default: ...)`.
func (r Request) Describe() string {
	p, err := Lookup(r.Provider)
	if err != nil {
		return r.Provider
	}
	var s string
	var notes []string
	if p.Makes {
		s = fmt.Sprintf("%s cluster %q, %s", p.Name, r.Shape.Name, p.Summary)
	} else {
		s = "kubectl's current context"
		if r.Existing.Context != "" {
			s = "context"
		}
		if name := cluster.CurrentContext(r.Existing.Kubeconfig, r.Existing.Context); name != "" {
			s += fmt.Sprintf(" %q", name)
		}
		if files := cluster.KubeconfigFiles(r.Existing.Kubeconfig); files != "" {
			s += " in " + files
		}
		if cfg, err := cluster.RESTConfig(r.Existing.Kubeconfig, r.Existing.Context); err == nil {
			notes = append(notes, cfg.Host)
		}
	}
	if r.Why != "" {
		notes = append(notes, r.Why)
	}
	if len(notes) > 0 {
		s += " (" + strings.Join(notes, "; ") + ")"
	}
	return s
}

// Images says where the nodes get the images the specs run: registry
// (empty: the nodes have them loaded) at tag, whether the run pushes them
// there first (--image-registry) or they were published there, and who
// named the registry.
func (r Request) Images() (registry, tag string, push bool, from string) {
	switch {
	case r.Shape.ImageRegistry != "":
		return r.Shape.ImageRegistry, buildinfo.ImageTag(), true, "--image-registry"
	case r.Existing.Published.Registry != "":
		return r.Existing.Published.Registry, buildinfo.ImageTag(), false, r.Existing.Published.From
	}
	return "", "", false, ""
}
