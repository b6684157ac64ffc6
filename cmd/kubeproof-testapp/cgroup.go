package main

import (
	"os"
	"path/filepath"
	"strings"
)

// CgroupLimits are the limits the process sees in its own cgroup files, as the
// kernel reports them (raw strings, so that "max" and -1 stay visible).
type CgroupLimits struct {
	Version string            `json:"version"`
	Files   map[string]string `json:"files"`
}

// cgroupFiles are read when present; v1 and v2 name the same limits
// differently.
var cgroupFiles = []string{
	// cgroup v1
	"memory/memory.limit_in_bytes",
	"cpu/cpu.cfs_quota_us",
	"cpu/cpu.cfs_period_us",
	"cpu/cpu.shares",
	"cpu,cpuacct/cpu.cfs_quota_us",
	"cpu,cpuacct/cpu.cfs_period_us",
	"cpu,cpuacct/cpu.shares",
	"pids/pids.max",
	// cgroup v2
	"memory.max",
	"cpu.max",
	"cpu.weight",
	"pids.max",
}

func readCgroupLimits() CgroupLimits {
	res := CgroupLimits{Version: "v1", Files: map[string]string{}}
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		res.Version = "v2"
	}
	for _, f := range cgroupFiles {
		data, err := os.ReadFile(filepath.Join("/sys/fs/cgroup", f))
		if err == nil {
			res.Files[f] = strings.TrimSpace(string(data))
		}
	}
	return res
}
