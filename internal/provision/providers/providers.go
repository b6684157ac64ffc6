// Package providers registers every cluster provider kubeproof has (see
// the registry of internal/provision/create). Import it for its side effect: a program
// that does (the kubeproof CLI, a test binary of the suites) can make, use
// and open clusters of every kind. Adding a provider is one more import
// here, beside the provider's own create.Register call.
package providers

import (
	// A cluster of processes on this machine.
	_ "github.com/kubeproof/kubeproof/internal/provision/local"
	// A cluster of Docker containers, made with kind.
	_ "github.com/kubeproof/kubeproof/internal/provision/kind"
	// Any cluster a kubeconfig reaches.
	_ "github.com/kubeproof/kubeproof/internal/provision/kubeconfig"
)
