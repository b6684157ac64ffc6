package evidencedoc

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kubeproof/kubeproof/claims/evidence"
)

// Examples are the evidence a run recorded: by spec ID, then evidence name,
// the value as claims.json has it.
type Examples map[string]map[string]any

// ReadExamples reads the evidence of a run's report directory (its
// claims.json, specs[].evidence).
func ReadExamples(reportDir string) (Examples, error) {
	data, err := os.ReadFile(filepath.Join(reportDir, "claims.json"))
	if err != nil {
		return nil, fmt.Errorf("read a run's evidence: %w", err)
	}
	var rep struct {
		Specs []struct {
			ID       string         `json:"id"`
			Evidence map[string]any `json:"evidence"`
		} `json:"specs"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, fmt.Errorf("read a run's evidence: %s: %w", filepath.Join(reportDir, "claims.json"), err)
	}
	ex := Examples{}
	for _, s := range rep.Specs {
		if len(s.Evidence) > 0 {
			ex[s.ID] = s.Evidence
		}
	}
	return ex, nil
}

// At returns the value recorded at path by spec: a list or an object
// whole, the first element for 0, the first key in order for {key}.
func (e Examples) At(spec, path string) (any, bool) { return evidence.Lookup(e[spec], path) }
