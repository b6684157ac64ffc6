package kubelet

import (
	"encoding/json"
	"strconv"
	"strings"
)

// parseCgroup reads `kubeproof-testapp cgroup` output into the numbers a
// check compares: the memory limit in bytes and the CPU limit in cores (-1
// when there is none).
func parseCgroup(out string) cgroupEvidence {
	var raw struct {
		Version string            `json:"version"`
		Files   map[string]string `json:"files"`
	}
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		return cgroupEvidence{Error: err.Error() + ": " + out, MemoryLimitBytes: -1, CPULimitCores: -1}
	}
	first := func(keys ...string) string {
		for _, k := range keys {
			if v, ok := raw.Files[k]; ok {
				return v
			}
		}
		return ""
	}
	num := func(s string) float64 {
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return -1
		}
		return f
	}
	ev := cgroupEvidence{Version: raw.Version, Files: raw.Files, CPULimitCores: -1}
	if raw.Version == "v2" {
		ev.MemoryLimitBytes = num(first("memory.max"))
		if quota, period, ok := strings.Cut(first("cpu.max"), " "); ok && num(quota) > 0 && num(period) > 0 {
			ev.CPULimitCores = num(quota) / num(period)
		}
		return ev
	}
	ev.MemoryLimitBytes = num(first("memory/memory.limit_in_bytes"))
	quota, period := num(first("cpu/cpu.cfs_quota_us", "cpu,cpuacct/cpu.cfs_quota_us")), num(first("cpu/cpu.cfs_period_us", "cpu,cpuacct/cpu.cfs_period_us"))
	if quota > 0 && period > 0 {
		ev.CPULimitCores = quota / period
	}
	return ev
}
