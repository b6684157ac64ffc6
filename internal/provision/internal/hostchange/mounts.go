// Package hostchange reads and restores the parts of the host that clusters
// change outside their own directories: mount points, cgroups and global
// kernel settings. Providers use it to leave the machine as they found it.
package hostchange

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// Mount is one entry of /proc/self/mountinfo.
type Mount struct {
	Point  string
	FSType string
}

// Mounts returns the mount points of this mount namespace.
func Mounts() ([]Mount, error) {
	rows, err := ProcFields("/proc/self/mountinfo", 0)
	if err != nil {
		return nil, err
	}
	var out []Mount
	for _, f := range rows {
		// Fields: id parent major:minor root mountpoint options ... - fstype source superopts
		sep := -1
		for i, x := range f {
			if x == "-" {
				sep = i
				break
			}
		}
		if len(f) < 5 || sep < 0 || sep+1 >= len(f) {
			continue
		}
		out = append(out, Mount{Point: UnescapeMount(f[4]), FSType: f[sep+1]})
	}
	return out, nil
}

// UnescapeMount decodes mountinfo's octal escapes (\040 for space).
func UnescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// IsMountPoint reports whether p is a mount point.
func IsMountPoint(p string) bool {
	ms, err := Mounts()
	if err != nil {
		return false
	}
	for _, m := range ms {
		if m.Point == p {
			return true
		}
	}
	return false
}

// UnmountUnder unmounts every mount point at or below the given
// directories, deepest first (pod volumes, container root filesystems,
// namespace files).
func UnmountUnder(dirs ...string) []error {
	ms, err := Mounts()
	if err != nil {
		return []error{err}
	}
	var targets []string
	for _, m := range ms {
		for _, d := range dirs {
			if m.Point == d || strings.HasPrefix(m.Point, d+"/") {
				targets = append(targets, m.Point)
				break
			}
		}
	}
	sort.Slice(targets, func(i, j int) bool { return len(targets[i]) > len(targets[j]) })
	var errs []error
	for _, t := range targets {
		if err := syscall.Unmount(t, 0); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
			// Still busy: detach it, the kernel frees it once unused.
			if err := Detach(t); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
				errs = append(errs, fmt.Errorf("unmount %s: %w", t, err))
			}
		}
	}
	return errs
}

// DirEmpty reports whether p is a directory with no entries.
func DirEmpty(p string) bool {
	entries, err := os.ReadDir(p)
	return err == nil && len(entries) == 0
}
