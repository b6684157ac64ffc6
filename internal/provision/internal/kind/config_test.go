package kind

import (
	"encoding/json"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
)

// The patch applies to the ClusterConfiguration kind generates here (no
// feature gates, IPv4: the scheduler's extraArgs are null), keeps kind's
// own flags, and gives the scheduler the node's addresses and the flags
// asked for.
func TestClusterConfigurationPatchApplies(t *testing.T) {
	generated := `{"apiServer":{"extraArgs":[{"name":"runtime-config","value":""}]},
		"controllerManager":{"extraArgs":[{"name":"enable-hostpath-provisioner","value":"true"}]},
		"scheduler":{"extraArgs":null}}`
	raw, err := clusterConfigurationPatch(Config{}, "kubeproof.local")
	if err != nil {
		t.Fatal(err)
	}
	withArgs := Config{}
	withArgs.ComponentArgs = map[string][]string{Scheduler: {"--v=4"}, ControllerManager: {"--v=3"}}
	raw2, err := clusterConfigurationPatch(withArgs, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{raw, raw2} {
		patch, err := jsonpatch.DecodePatch([]byte(p))
		if err != nil {
			t.Fatal(err)
		}
		out, err := patch.Apply([]byte(generated))
		if err != nil {
			t.Fatalf("the patch does not apply: %v", err)
		}
		var cfg struct {
			ControllerManager, Scheduler struct {
				ExtraArgs []struct{ Name, Value string } `json:"extraArgs"`
			}
		}
		if err := json.Unmarshal(out, &cfg); err != nil {
			t.Fatal(err)
		}
		if len(cfg.Scheduler.ExtraArgs) == 0 || cfg.Scheduler.ExtraArgs[0].Name != "bind-address" || cfg.Scheduler.ExtraArgs[0].Value != "0.0.0.0" {
			t.Errorf("scheduler extraArgs %+v", cfg.Scheduler.ExtraArgs)
		}
		if cfg.ControllerManager.ExtraArgs[0].Name != "enable-hostpath-provisioner" {
			t.Errorf("kind's controller manager flags lost: %+v", cfg.ControllerManager.ExtraArgs)
		}
	}
}
