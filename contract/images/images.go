// Package images names the images kubeproof's specs run: each one of this
// repository's programs, packed alone into an image (see
// internal/provision/internal/imagebuild for how they are built and loaded). A spec
// puts Ref into its Pods; nothing is ever pulled for them (the images the
// pull specs download are made apart, see package freshimage).
package images

import (
	"regexp"
	"strings"
)

// Image is one of our images: a program from cmd/ packed as /<Program>.
type Image struct {
	// Ref is the image's name as kubeproof builds it and loads it into the
	// nodes of the clusters it makes (kubeproof.local/<name>:<tag>). The tag
	// is never "latest", so the default imagePullPolicy is IfNotPresent and
	// nothing is pulled.
	Ref string
	// Program is the file name of the binary (built by `make build` next to
	// the kubeproof binary).
	Program string
	// Args are the default arguments after the program.
	Args []string
}

var (
	// Pause is the pod sandbox image (containerd's sandbox_image).
	Pause = Image{Ref: "kubeproof.local/pause:v1", Program: "kubeproof-pause"}
	// TestApp is the workload image of every suite.
	TestApp = Image{Ref: "kubeproof.local/testapp:v1", Program: "kubeproof-testapp", Args: []string{"serve"}}
	// Webhook is kubeproof's admission webhook server (package webhooks).
	Webhook = Image{Ref: "kubeproof.local/webhook:v1", Program: "kubeproof-webhook"}
	// CNI is the pod network daemon of kind clusters (internal/provision/cmd/kubeproof-cni).
	CNI = Image{Ref: "kubeproof.local/cni:v1", Program: "kubeproof-cni"}
)

// All are the images every cluster gets.
var All = []Image{Pause, TestApp, Webhook}

// LoadedRegistry is the registry part of the names images are loaded
// under: a name no registry answers to, so nothing is ever pulled for it.
const LoadedRegistry = "kubeproof.local"

// registry and tag are where this run's Pods take our images from:
// LoadedRegistry (the nodes have them) unless the run was given a
// registry (UseRegistry).
var (
	registry = LoadedRegistry
	tag      string
)

// UseRegistry makes the Pods of this run take our images from reg (a host
// and optional path) at tag, as `kubeproof image push --registry` and a
// release put them there, for clusters whose nodes kubeproof did not load
// them into.
func UseRegistry(reg, imageTag string) {
	if reg != "" {
		registry, tag = strings.TrimSuffix(reg, "/"), imageTag
	}
}

// Registry is where this run's Pods take our images from.
func Registry() string { return registry }

// PodRef is the reference a Pod of this run uses for the image: its loaded
// name, or its name in the run's registry.
func (i Image) PodRef() string {
	if registry == LoadedRegistry {
		return i.Ref
	}
	return InRegistry(i, registry, tag)
}

// Name is the image's name without registry or tag ("testapp").
func (i Image) Name() string {
	name, _, _ := strings.Cut(strings.TrimPrefix(i.Ref, LoadedRegistry+"/"), ":")
	return name
}

// LoadedTag is the tag the image is built and loaded under ("v1").
func (i Image) LoadedTag() string {
	_, t, _ := strings.Cut(strings.TrimPrefix(i.Ref, LoadedRegistry+"/"), ":")
	return t
}

// InRegistry is the image's name in registry reg, tagged imageTag: in a
// registry our images carry the version of the kubeproof they came with,
// so that nodes that keep an image by its name never run another
// release's.
func InRegistry(i Image, reg, imageTag string) string {
	return strings.TrimSuffix(reg, "/") + "/" + i.Name() + ":" + imageTag
}

// loadedRef matches a loaded name in a manifest, kubeproof.local/NAME:TAG,
// as a whole reference: not the tail of a name in another registry
// (registry.example/kubeproof.local/x), which is left as it is.
var loadedRef = regexp.MustCompile(`(?m)(^|[^A-Za-z0-9._/-])` + regexp.QuoteMeta(LoadedRegistry) + `/([a-z0-9][a-z0-9._-]*)(:[A-Za-z0-9_][A-Za-z0-9_.-]*)?`)

// Rewrite points the image references in a manifest at the run's registry.
func Rewrite(manifest []byte) []byte {
	if registry == LoadedRegistry {
		return manifest
	}
	return loadedRef.ReplaceAll(manifest, []byte("${1}"+registry+"/${2}:"+tag))
}

// Workloads are the images the specs run in Pods: those a cluster
// kubeproof did not make needs from a registry.
var Workloads = []Image{TestApp, Webhook}

// IsWorkload reports whether img is one of the Workloads.
func IsWorkload(img Image) bool {
	for _, w := range Workloads {
		if w.Ref == img.Ref {
			return true
		}
	}
	return false
}
