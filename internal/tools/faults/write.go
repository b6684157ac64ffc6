package faults

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// WriteReports writes faults.json and faults.md of the outcomes into dir.
func WriteReports(dir string, outcomes []Outcome) error {
	data, err := json.MarshalIndent(outcomes, "", "  ")
	if err != nil {
		return fmt.Errorf("encode faults.json: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "faults.json"), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write faults.json: %w", err)
	}
	f, err := os.Create(filepath.Join(dir, "faults.md"))
	if err != nil {
		return fmt.Errorf("write faults.md: %w", err)
	}
	defer f.Close()
	if err := Markdown(f, outcomes); err != nil {
		return fmt.Errorf("write faults.md: %w", err)
	}
	return f.Close()
}
