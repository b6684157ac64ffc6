package containerdconf

import (
	"fmt"
	"strings"

	"github.com/BurntSushi/toml"
)

// Settings are the CRI settings of a containerd configuration that the
// nodes kubeproof runs depend on, as a node image not built by kubeproof
// has them.
type Settings struct {
	// Version is the configuration's version: 2 (containerd 1.x, and what
	// kind's own node images carry) or 3 (containerd 2's own).
	Version int
	// RestrictOOMScoreAdj: containerd does not lower a sandbox's
	// oom_score_adj (a host without CAP_SYS_RESOURCE needs it).
	RestrictOOMScoreAdj bool
	// RegistryConfigPath is where containerd reads a hosts.toml per registry.
	RegistryConfigPath string
	// Sandbox is the pause image, if the configuration names one.
	Sandbox string
	// InternalLoopback: containerd sets up each sandbox's lo itself, not
	// through the loopback CNI plugin.
	InternalLoopback bool
}

// The CRI plugins' sections, by configuration version.
const (
	criV2      = "io.containerd.grpc.v1.cri"
	imagesV3   = "io.containerd.cri.v1.images"
	runtimeV3  = "io.containerd.cri.v1.runtime"
	versionKey = "version"
)

// Read parses a containerd configuration's CRI settings.
func Read(text string) (Settings, error) {
	var conf map[string]any
	if _, err := toml.Decode(text, &conf); err != nil {
		return Settings{}, fmt.Errorf("parse containerd configuration: %w", err)
	}
	s := Settings{Version: 1}
	if v, ok := conf[versionKey].(int64); ok {
		s.Version = int(v)
	}
	plugins, _ := conf["plugins"].(map[string]any)
	get := func(path ...string) any {
		var cur any = plugins
		for _, p := range path {
			m, ok := cur.(map[string]any)
			if !ok {
				return nil
			}
			cur = m[p]
		}
		return cur
	}
	str := func(path ...string) string { v, _ := get(path...).(string); return v }
	flag := func(path ...string) bool { v, _ := get(path...).(bool); return v }
	switch s.Version {
	case 2:
		s.RestrictOOMScoreAdj = flag(criV2, "restrict_oom_score_adj")
		s.RegistryConfigPath = str(criV2, "registry", "config_path")
		s.Sandbox = str(criV2, "sandbox_image")
	case 3:
		s.RestrictOOMScoreAdj = flag(runtimeV3, "restrict_oom_score_adj")
		s.RegistryConfigPath = str(imagesV3, "registry", "config_path")
		s.Sandbox = str(imagesV3, "pinned_images", "sandbox")
		s.InternalLoopback = flag(runtimeV3, "cni", "use_internal_loopback")
	default:
		return s, fmt.Errorf("containerd configuration version %d: kubeproof reads versions 2 and 3", s.Version)
	}
	return s, nil
}

// Patch is a TOML document that, merged into a configuration of version
// (as kind's containerdConfigPatches are), sets restrict_oom_score_adj
// when restrictOOM, and the registry configuration path when configPath
// is not empty. It is empty when there is nothing to set.
func Patch(version int, restrictOOM bool, configPath string) (string, error) {
	var runtime, registry string
	switch version {
	case 2:
		runtime, registry = criV2, criV2
	case 3:
		runtime, registry = runtimeV3, imagesV3
	default:
		return "", fmt.Errorf("containerd configuration version %d: kubeproof patches versions 2 and 3", version)
	}
	var b strings.Builder
	if restrictOOM {
		fmt.Fprintf(&b, "[plugins.%q]\n  restrict_oom_score_adj = true\n", runtime)
	}
	if configPath != "" {
		fmt.Fprintf(&b, "[plugins.%q.registry]\n  config_path = %q\n", registry, configPath)
	}
	return b.String(), nil
}
