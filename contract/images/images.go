// Package images names the images kubeproof's specs run: each one of this
// repository's programs, packed alone into an image (see
// internal/provision/internal/imagebuild for how they are built and loaded). A spec
// puts Ref into its Pods; nothing is ever pulled for them (the images the
// pull specs download are made apart, see package freshimage).
package images

import "strings"

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

// registry is where this run's Pods take our images from: LoadedRegistry
// (the nodes have them) unless the run was given one (UseRegistry).
var registry = LoadedRegistry

// UseRegistry makes the Pods of this run take our images from reg (a host
// and optional path, as `kubeproof image push --registry` puts them there),
// for clusters whose nodes kubeproof did not load them into.
func UseRegistry(reg string) {
	if reg != "" {
		registry = strings.TrimSuffix(reg, "/")
	}
}

// Registry is where this run's Pods take our images from.
func Registry() string { return registry }

// PodRef is the reference a Pod of this run uses for the image: its loaded
// name, or its name in the run's registry.
func (i Image) PodRef() string { return InRegistry(i, registry) }

// InRegistry is the image's name in registry reg.
func InRegistry(i Image, reg string) string {
	return reg + strings.TrimPrefix(i.Ref, LoadedRegistry)
}

// Rewrite points the image references in a manifest at the run's registry.
func Rewrite(manifest []byte) []byte {
	if registry == LoadedRegistry {
		return manifest
	}
	return []byte(strings.ReplaceAll(string(manifest), LoadedRegistry+"/", registry+"/"))
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
