//go:build !linux

package runner

// dieWithParent: other systems have no parent-death signal. A spec process
// there ends when the run's context ends it, or with the cluster's
// connection; a SIGKILLed kubeproof can leave it running until then.
func dieWithParent() {}
