package kind

import (
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/provision/internal/containerdconf"
	"github.com/kubeproof/kubeproof/internal/provision/internal/nodeimage"
)

// kubeadm's image list of v1.37.2 under a repository (as kubeadm prints it).
func fakeKubeadm(repo string) ([]string, error) {
	var out []string
	for _, img := range []string{"kube-apiserver:v1.37.2", "kube-controller-manager:v1.37.2", "kube-scheduler:v1.37.2",
		"kube-proxy:v1.37.2", "coredns:v1.14.2", "pause:3.10.1", "etcd:3.6.8-0"} {
		out = append(out, repo+"/"+img)
	}
	return out, nil
}

func with(list []string, more ...string) []string { return append(slices.Clone(list), more...) }

// kind's own node image: Debian trixie (systemd 257), containerd
// configuration version 2 without restrict_oom_score_adj or a registry
// directory, CNI plugins without bridge, kubeadm's images under
// registry.k8s.io.
func kindsOwn() nodeimage.Contents {
	imgs, _ := fakeKubeadm("registry.k8s.io")
	return nodeimage.Contents{
		KubernetesVersion: "v1.37.2",
		Systemd:           257,
		ContainerdConfig: `version = 2
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:3.10"
  restrict_oom_score_adj = false
`,
		CNIPlugins: []string{"host-local", "loopback", "ptp", "portmap"},
		Images:     with(imgs, "registry.k8s.io/pause:3.10", "docker.io/kindest/local-path-provisioner:v0.0.33"),
	}
}

// kubeproof's node image, served under another name.
func kubeproofs() nodeimage.Contents {
	imgs, _ := fakeKubeadm(nodeimage.Repository)
	return nodeimage.Contents{
		KubernetesVersion: "v1.37.2",
		Systemd:           252,
		ContainerdConfig: "version = 3\n" + containerdconf.CRI{Snapshotter: "overlayfs", Sandbox: "kubeproof.local/pause:v1",
			RegistryConfigPath: certsDir, CNIBinDir: "/opt/cni/bin", CNIConfDir: "/etc/cni/net.d"}.Sections(),
		CNIPlugins: []string{"bandwidth", "bridge", "host-local", "loopback", "portmap", "kubeproof-cni-trace"},
		Images:     with(imgs, "kubeproof.local/pause:v1", "kubeproof.local/testapp:v1", "kubeproof.local/webhook:v1", "kubeproof.local/cni:v1"),
	}
}

var (
	thisVM      = hostTraits{CgroupV1: true, NoSysResource: true}
	githubHosts = hostTraits{}
)

func TestPlanForeign(t *testing.T) {
	// kubeproof's own node image under another name needs nothing but
	// kubeadm's repository.
	f, err := planForeign("127.0.0.1:5000/m/node:e2e", kubeproofs(), "v1.37.2", fakeKubeadm, thisVM)
	if err != nil {
		t.Fatal(err)
	}
	if f.ImageRepository != nodeimage.Repository || f.ContainerdPatch != "" || len(f.Plugins) != 0 {
		t.Errorf("kubeproof's node image: %+v", f)
	}

	// kind's own node image on a cgroup v2 host with every capability:
	// kubeadm's default repository, the registry directory, and the bridge.
	f, err = planForeign("kindest/node:v1.37.2", kindsOwn(), "v1.37.2", fakeKubeadm, githubHosts)
	if err != nil {
		t.Fatal(err)
	}
	if f.ImageRepository != "" || !slices.Equal(f.Plugins, []string{"bridge"}) || len(f.Patched) != 1 {
		t.Errorf("kind's node image: %+v", f)
	}
	var patch map[string]any
	if _, err := toml.Decode(f.ContainerdPatch, &patch); err != nil {
		t.Fatalf("patch %q: %v", f.ContainerdPatch, err)
	}
	if strings.Contains(f.ContainerdPatch, "restrict_oom_score_adj") {
		t.Errorf("a host with CAP_SYS_RESOURCE needs no restrict_oom_score_adj: %s", f.ContainerdPatch)
	}
	line := f.String(4)
	for _, want := range []string{"kindest/node:v1.37.2", "found in Docker", "registry.k8s.io", "loads its 4 images", "CNI plugins bridge", "config_path"} {
		if !strings.Contains(line, want) {
			t.Errorf("the line lacks %q: %s", want, line)
		}
	}
	if strings.Contains(line, "\n") {
		t.Errorf("not one line: %q", line)
	}

	// The same with an older systemd on this VM: restrict_oom_score_adj too.
	old := kindsOwn()
	old.Systemd = 252
	if f, err = planForeign("kindest/node:old-base", old, "v1.37.2", fakeKubeadm, thisVM); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(f.ContainerdPatch, "restrict_oom_score_adj = true") || len(f.Patched) != 2 {
		t.Errorf("on this VM: %+v", f)
	}
}

// What a node image lacks is said in one line, with a usage exit code.
func TestPlanForeignRefuses(t *testing.T) {
	for name, tc := range map[string]struct {
		change func(*nodeimage.Contents)
		host   hostTraits
		want   string
	}{
		"not a kind node image":              {func(c *nodeimage.Contents) { *c = nodeimage.Contents{} }, githubHosts, "has no /kind/version"},
		"another release":                    {func(c *nodeimage.Contents) { c.KubernetesVersion = "v1.35.4" }, githubHosts, "give --kubernetes-version v1.35.4"},
		"systemd 257 on cgroup v1":           {func(*nodeimage.Contents) {}, thisVM, "has systemd 257, which refuses to boot on this machine's cgroup v1"},
		"no containerd configuration":        {func(c *nodeimage.Contents) { c.ContainerdConfig = "" }, githubHosts, "no containerd configuration"},
		"containerd configuration version 1": {func(c *nodeimage.Contents) { c.ContainerdConfig = "[plugins.cri]\n" }, githubHosts, "cannot use"},
		"kubeadm's etcd missing": {func(c *nodeimage.Contents) {
			c.Images = slices.DeleteFunc(slices.Clone(c.Images), func(s string) bool { return strings.Contains(s, "/etcd:") })
		}, githubHosts, "lacks images kubeadm needs for Kubernetes v1.37.2, and kubeproof's nodes pull none: registry.k8s.io/etcd:3.6.8-0"},
		"no images at all": {func(c *nodeimage.Contents) { c.Images = nil }, githubHosts, "registry.k8s.io/kube-apiserver:v1.37.2, "},
		"the sandbox image missing": {func(c *nodeimage.Contents) {
			c.Images = slices.DeleteFunc(slices.Clone(c.Images), func(s string) bool { return s == "registry.k8s.io/pause:3.10" })
		}, githubHosts, "lacks the sandbox image its containerd configuration names: registry.k8s.io/pause:3.10"},
	} {
		t.Run(name, func(t *testing.T) {
			c := kindsOwn()
			tc.change(&c)
			_, err := planForeign("kindest/node:v1.37.2", c, "v1.37.2", fakeKubeadm, tc.host)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "--node-image kindest/node:v1.37.2 ") {
				t.Errorf("not one line naming the flag: %q", err)
			}
			if exitcode.Of(err) != exitcode.Usage {
				t.Errorf("exit code %v", exitcode.Of(err))
			}
		})
	}
}

// kubeadm is told the repository only when the node image holds kubeadm's
// images under one of its own; kind's containerd patches go into the
// configuration.
func TestKindConfigNodeSetup(t *testing.T) {
	c := Config{}
	c.Shape = c.Shape.WithDefaults()
	cfg, err := kindConfig(c, layout{name: "x"}, "img", nodeSetup{ContainerdPatches: []string{"[plugins.x]\n"}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(cfg.KubeadmConfigPatchesJSON6902[0].Patch, "imageRepository") {
		t.Errorf("kubeadm's default repository: the patch sets one: %s", cfg.KubeadmConfigPatchesJSON6902[0].Patch)
	}
	if len(cfg.ContainerdConfigPatches) != 1 {
		t.Errorf("containerd patches %q", cfg.ContainerdConfigPatches)
	}
	cfg, err = kindConfig(c, layout{name: "x"}, "img", nodeSetup{ImageRepository: nodeimage.Repository})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cfg.KubeadmConfigPatchesJSON6902[0].Patch, `"/imageRepository","value":"kubeproof.local"`) || cfg.ContainerdConfigPatches != nil {
		t.Errorf("kubeproof's node image: %s, %q", cfg.KubeadmConfigPatchesJSON6902[0].Patch, cfg.ContainerdConfigPatches)
	}
}
