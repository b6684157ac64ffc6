// Package report writes the verdicts of a run: claims.json (a stable,
// documented schema for tools), claims.md (a table per document, fit for a
// CI job summary), claims.html (the same, self-contained, with charts where
// there are numbers) and a short summary for the terminal.
package report

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/kubeproof/kubeproof/framework/claims"
	"github.com/kubeproof/kubeproof/framework/cluster"
)

// SchemaVersion names the claims.json format (docs/claims-json.md).
const SchemaVersion = "kubeproof.io/claims/v1"

// Report is the content of claims.json.
type Report struct {
	SchemaVersion string           `json:"schemaVersion"`
	GeneratedAt   time.Time        `json:"generatedAt"`
	Cluster       Cluster          `json:"cluster"`
	Summary       map[string]int   `json:"summary"`
	Documents     []DocumentResult `json:"documents"`
	// Specs are the specs that ran, with all the evidence they recorded.
	Specs []claims.SpecResult `json:"specs"`
}

// Cluster describes the cluster the verdicts are about.
type Cluster struct {
	Provider          string               `json:"provider"`
	Name              string               `json:"name"`
	KubernetesVersion string               `json:"kubernetesVersion"`
	Nodes             int                  `json:"nodes"`
	Capabilities      []cluster.Capability `json:"capabilities"`
}

// DocumentResult is one document and its claims' results.
type DocumentResult struct {
	File    string          `json:"file"`
	Title   string          `json:"title"`
	Summary map[string]int  `json:"summary"`
	Claims  []claims.Result `json:"claims"`
}

// New assembles the report of results on the cluster info describes.
func New(docs []claims.Document, results []claims.Result, specs map[string]claims.SpecResult, info *cluster.Info) Report {
	r := Report{SchemaVersion: SchemaVersion, GeneratedAt: time.Now().UTC(), Summary: counts(results)}
	for _, id := range slices.Sorted(maps.Keys(specs)) {
		r.Specs = append(r.Specs, specs[id])
	}
	if info != nil {
		r.Cluster = Cluster{Provider: info.Provider, Name: info.Name, KubernetesVersion: info.KubernetesVersion,
			Nodes: len(info.Nodes), Capabilities: info.Capabilities}
	}
	for _, d := range docs {
		dr := DocumentResult{File: d.File, Title: d.Title}
		for _, res := range results {
			if res.Claim.Document == d.File {
				dr.Claims = append(dr.Claims, res)
			}
		}
		if len(dr.Claims) == 0 {
			continue
		}
		dr.Summary = counts(dr.Claims)
		r.Documents = append(r.Documents, dr)
	}
	return r
}

func counts(rs []claims.Result) map[string]int {
	out := map[string]int{}
	for v, n := range claims.Summarize(rs) {
		out[string(v)] = n
	}
	return out
}

// Write writes claims.json, claims.md and claims.html into dir.
func Write(dir string, r Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create report directory: %w", err)
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode claims.json: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "claims.json"), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write claims.json: %w", err)
	}
	for name, render := range map[string]func(io.Writer, Report) error{"claims.md": Markdown, "claims.html": HTML} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
		if err := render(f, r); err != nil {
			f.Close()
			return fmt.Errorf("write %s: %w", name, err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	return nil
}

// Terminal prints the verdict counts and every claim that is not confirmed.
func Terminal(w io.Writer, r Report) {
	fmt.Fprintf(w, "\nClaims on %s cluster %q (Kubernetes %s):\n", r.Cluster.Provider, r.Cluster.Name, r.Cluster.KubernetesVersion)
	for _, v := range claims.Verdicts {
		if n := r.Summary[string(v)]; n > 0 {
			fmt.Fprintf(w, "  %-14s %d\n", v, n)
		}
	}
	for _, d := range r.Documents {
		for _, res := range d.Claims {
			switch res.Verdict {
			case claims.Refuted, claims.Conditional, claims.Error:
				fmt.Fprintf(w, "  %-11s %-22s %s\n", res.Verdict, res.Claim.ID, res.Reason)
			}
		}
	}
}
