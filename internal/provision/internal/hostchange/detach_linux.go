package hostchange

import "syscall"

// Detach unmounts path lazily (MNT_DETACH): it is gone from the tree at
// once, and the kernel frees it once nothing uses it.
func Detach(path string) error { return syscall.Unmount(path, syscall.MNT_DETACH) }
