package faults

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Schema names the shape of faults.json (Document).
const Schema = "kubeproof.io/faults/v1"

// Document is faults.json: the fault matrix's outcomes.
type Document struct {
	// SchemaVersion names this document's shape (Schema); within a version
	// fields are only added.
	SchemaVersion string `json:"schemaVersion"`
	// Outcomes are the faults, in the matrix's order, each with what the
	// run on a cluster broken so found.
	Outcomes []Outcome `json:"outcomes"`
}

// WriteReports writes faults.json and faults.md of the outcomes into dir.
func WriteReports(dir string, outcomes []Outcome) error {
	data, err := json.MarshalIndent(Document{SchemaVersion: Schema, Outcomes: append([]Outcome{}, outcomes...)}, "", "  ")
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
