//go:build !linux

package hostchange

import (
	"fmt"
	"runtime"
)

// Detach: a lazy unmount is Linux's; kubeproof mounts nothing elsewhere.
func Detach(path string) error {
	return fmt.Errorf("detach %s: no lazy unmount on %s", path, runtime.GOOS)
}
