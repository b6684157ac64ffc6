package controlplane

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"sigs.k8s.io/yaml"

	"github.com/kubeproof/kubeproof/contract/cluster"
)

// ChangeArgs is a component's command line changed as change says: its
// flags replaced by those of the same name in change.Args (Override), and,
// unless the component takes them from its configuration file
// (gatesInConfig), change.FeatureGates merged into one --feature-gates
// flag with the gates it already had.
func ChangeArgs(args []string, change cluster.ComponentChange, gatesInConfig bool) []string {
	out := Override(args, change.Args)
	if len(change.FeatureGates) == 0 || gatesInConfig {
		return out
	}
	gates := map[string]bool{}
	var kept []string
	for _, a := range out {
		v, ok := strings.CutPrefix(a, "--feature-gates=")
		if !ok {
			kept = append(kept, a)
			continue
		}
		for _, kv := range strings.Split(v, ",") {
			k, b, _ := strings.Cut(kv, "=")
			if on, err := strconv.ParseBool(b); err == nil && k != "" {
				gates[k] = on
			}
		}
	}
	maps.Copy(gates, change.FeatureGates)
	return append(kept, "--feature-gates="+GatesFlag(gates))
}

// GatesFlag is the value of a --feature-gates flag, sorted (A=true,B=false).
func GatesFlag(gates map[string]bool) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(gates)) {
		parts = append(parts, k+"="+strconv.FormatBool(gates[k]))
	}
	return strings.Join(parts, ",")
}

// PatchConfig applies change to a component's configuration file (YAML):
// its Config as a JSON merge patch, its FeatureGates into featureGates.
func PatchConfig(data []byte, change cluster.ComponentChange) ([]byte, error) {
	doc, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("read the configuration: %w", err)
	}
	patch := map[string]any{}
	maps.Copy(patch, change.Config)
	if len(change.FeatureGates) > 0 {
		gates := map[string]any{}
		if g, ok := patch["featureGates"].(map[string]any); ok {
			maps.Copy(gates, g)
		}
		for k, v := range change.FeatureGates {
			gates[k] = v
		}
		patch["featureGates"] = gates
	}
	raw, err := json.Marshal(patch)
	if err != nil {
		return nil, fmt.Errorf("encode the configuration's patch: %w", err)
	}
	merged, err := jsonpatch.MergePatch(doc, raw)
	if err != nil {
		return nil, fmt.Errorf("patch the configuration: %w", err)
	}
	return yaml.JSONToYAML(merged)
}

// ConfigFlag is the value of args' --config flag ("" without one).
func ConfigFlag(args []string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--config="); ok {
			return v
		}
	}
	return ""
}

// Unchanged says that change changes nothing: a plain restart.
func Unchanged(change cluster.ComponentChange) bool {
	return len(change.Args) == 0 && len(change.FeatureGates) == 0 && len(change.Config) == 0
}
