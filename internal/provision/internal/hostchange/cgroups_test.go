package hostchange

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// RemoveCgroup removes a tree of cgroups, children before parents, in every
// hierarchy.
func TestCgroupTreeRemoved(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	if err := MakeCgroup("kubeproof-cgtest"); err != nil {
		t.Fatal(err)
	}
	roots, _ := CgroupMounts()
	for _, r := range roots {
		if err := os.MkdirAll(filepath.Join(r, "kubeproof-cgtest", "a", "b"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if errs := RemoveCgroup("kubeproof-cgtest"); len(errs) > 0 {
		t.Fatal(errs)
	}
	for _, r := range roots {
		if _, err := os.Stat(filepath.Join(r, "kubeproof-cgtest")); err == nil {
			t.Fatalf("left %s", filepath.Join(r, "kubeproof-cgtest"))
		}
	}
}

// The three layouts a machine can have: this one (v1), a GitHub-hosted
// runner's (v2 only), and systemd's hybrid.
func TestCgroupLayout(t *testing.T) {
	v1 := []Mount{{Point: "/sys/fs/cgroup/cpu", FSType: "cgroup"}, {Point: "/sys/fs/cgroup/memory", FSType: "cgroup"}}
	v2 := []Mount{{Point: "/sys/fs/cgroup", FSType: "cgroup2"}}
	hybrid := append(append([]Mount{}, v1...), Mount{Point: "/sys/fs/cgroup/unified", FSType: "cgroup2"})
	for layout, ms := range map[string][]Mount{"v1": v1, "v2": v2, "hybrid": hybrid, "": {{Point: "/", FSType: "ext4"}}} {
		if got := CgroupLayout(ms); got != layout {
			t.Errorf("%v: %q, want %q", ms, got, layout)
		}
	}
	ms, err := Mounts()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("this machine: %s", CgroupLayout(ms))
}

// The node cgroup decisions for each kind of host: which driver, which
// cgroupRoot, which controllers the node's subtree gets, and what a host
// without a controller the node needs is told.
func TestPlanNodeCgroup(t *testing.T) {
	all := []string{"cpuset", "cpu", "io", "memory", "hugetlb", "pids", "rdma", "misc"}
	uml := []string{"cpu", "io", "memory", "pids"}
	for _, tc := range []struct {
		name        string
		host        CgroupHost
		driver      string
		slice       string
		dir         string
		controllers []string
		lacks       []string
		err         string
	}{
		{name: "this VM: v1 controllers beside an empty v2", host: CgroupHost{Layout: "hybrid", UnifiedRoot: "/sys/fs/cgroup/unified"}, driver: DriverCgroupfs},
		{name: "v1 with systemd keeps cgroupfs", host: CgroupHost{Layout: "v1", Systemd: true}, driver: DriverCgroupfs},
		{name: "v2, no systemd (a container, the UML guest)", host: CgroupHost{Layout: "v2", UnifiedRoot: "/sys/fs/cgroup", Controllers: uml},
			driver: DriverCgroupfs, dir: "/sys/fs/cgroup/kubeproof-a-b", controllers: []string{"cpu", "io", "memory", "pids"}, lacks: []string{"cpuset", "hugetlb"}},
		{name: "v2 booted by systemd (Ubuntu 24.04, GitHub's runners)", host: CgroupHost{Layout: "v2", UnifiedRoot: "/sys/fs/cgroup", Controllers: all, Systemd: true},
			driver: DriverSystemd, slice: "kubeproof_a_b.slice", dir: "/sys/fs/cgroup/kubeproof_a_b.slice", controllers: []string{"cpu", "cpuset", "hugetlb", "io", "memory", "pids"}},
		{name: "v2 without the memory controller", host: CgroupHost{Layout: "v2", UnifiedRoot: "/sys/fs/cgroup", Controllers: []string{"cpu", "pids"}},
			err: "offers the controllers [cpu pids], and a node needs memory too"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := PlanNodeCgroup(tc.host, "kubeproof-a-b")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n.Driver != tc.driver || n.Slice != tc.slice || n.KubeletRoot != "/kubeproof-a-b" {
				t.Errorf("driver %q slice %q root %q; want %q %q /kubeproof-a-b", n.Driver, n.Slice, n.KubeletRoot, tc.driver, tc.slice)
			}
			if n.Unified != (tc.host.Layout == "v2") {
				t.Errorf("unified = %t", n.Unified)
			}
			if tc.dir != "" && n.Dir() != tc.dir {
				t.Errorf("dir %q, want %q", n.Dir(), tc.dir)
			}
			if !slices.Equal(n.Controllers, tc.controllers) || !slices.Equal(n.Lacks, tc.lacks) {
				t.Errorf("controllers %v lacks %v; want %v, %v", n.Controllers, n.Lacks, tc.controllers, tc.lacks)
			}
			t.Log(n.Describe())
		})
	}
}

// SubtreeControl keeps what the root had enabled before its first holder
// and, when the last one leaves, disables only what was added since. A
// real cgroup v2 root is needed: the kernel's +/- syntax is what is tested.
func TestSubtreeControlRestores(t *testing.T) {
	host, err := ReadCgroupHost()
	if err != nil || host.Layout != "v2" || os.Geteuid() != 0 {
		t.Skip("needs root on a cgroup v2 host (make e2e-cgroup2 runs the local provider on one)")
	}
	before, _ := os.ReadFile(filepath.Join(host.UnifiedRoot, "cgroup.subtree_control"))
	s := SubtreeControl{File: filepath.Join(t.TempDir(), "saved.json"), Dir: host.UnifiedRoot}
	if err := s.Hold("a", host.Controllers); err != nil {
		t.Fatal(err)
	}
	if err := s.Hold("b", host.Controllers); err != nil {
		t.Fatal(err)
	}
	if err := s.Release("a"); err != nil {
		t.Fatal(err)
	}
	now, _ := os.ReadFile(filepath.Join(host.UnifiedRoot, "cgroup.subtree_control"))
	if len(strings.Fields(string(now))) != len(host.Controllers) {
		t.Errorf("with a holder left: %q, want every controller", now)
	}
	if err := s.Release("b"); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(filepath.Join(host.UnifiedRoot, "cgroup.subtree_control"))
	if string(after) != string(before) {
		t.Errorf("after the last holder: %q, before the first: %q", after, before)
	}
}
