// Package images names the images kubeproof's specs run: each one of this
// repository's programs, packed alone into an image (see
// internal/provision/imagebuild for how they are built and loaded). A spec
// puts Ref into its Pods; nothing is ever pulled for them.
package images

// Image is one of our images: a program from cmd/ packed as /<Program>.
type Image struct {
	// Ref is the image reference pods use. The tag is never "latest", so the
	// default imagePullPolicy is IfNotPresent and nothing is pulled.
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
	// CNI is the pod network daemon of kind clusters (cmd/kubeproof-cni).
	CNI = Image{Ref: "kubeproof.local/cni:v1", Program: "kubeproof-cni"}
)

// All are the images every cluster gets.
var All = []Image{Pause, TestApp, Webhook}
