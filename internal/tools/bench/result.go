package bench

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kubeproof/kubeproof/contract/cluster"
)

// Schema names the shape of bench.json (Result).
const Schema = "kubeproof.io/bench/v1"

// Result is what `kubeproof bench` writes to bench.json.
type Result struct {
	// SchemaVersion names this document's shape (Schema); within a version
	// fields are only added.
	SchemaVersion string          `json:"schemaVersion"`
	GeneratedAt   time.Time       `json:"generatedAt"`
	Kubeproof     string          `json:"kubeproof"`
	CPUs          int             `json:"cpus"`
	Providers     []providerBench `json:"providers"`
	EndToEnd      *commandBench   `json:"endToEnd,omitempty"`
	// HarnessPeakMiB is the peak resident memory of the kubeproof process
	// that ran the benchmarks (clients, watches, the providers' own work).
	HarnessPeakMiB float64 `json:"harnessPeakMiB"`
}

type providerBench struct {
	Provider          string       `json:"provider"`
	KubernetesVersion string       `json:"kubernetesVersion"`
	Nodes             int          `json:"nodes"`
	Rounds            []roundBench `json:"rounds"`
	// ComponentPeakMiB is each component process's peak resident memory in
	// the last round, read before the cluster goes down (providers whose
	// components are processes on this machine; kind's run inside node
	// containers).
	ComponentPeakMiB map[string]float64 `json:"componentPeakMiB,omitempty"`
}

// roundBench is one bring-up, measured: up, Pods, the suites, down.
type roundBench struct {
	UpMs       float64                   `json:"upMs"`
	Components []cluster.ComponentStatus `json:"components"`
	DownMs     float64                   `json:"downMs"`
	// PodStartup is the SIG scalability pod startup latency: creation to
	// all containers running, seen by watch.
	PodStartup Distribution `json:"podStartupMs"`
	Suites     []suiteBench `json:"suites,omitempty"`
}

type suiteBench struct {
	WallMs   float64      `json:"wallMs"`
	Parallel int          `json:"parallel"`
	Passed   bool         `json:"passed"`
	Spec     Distribution `json:"specRunMs"`
	Setup    Distribution `json:"harnessSetupMs"`
	Teardown Distribution `json:"harnessTeardownMs"`
	// FinalWaitMs is the suite's end: the wait for every namespace of the
	// run to be gone.
	FinalWaitMs float64 `json:"finalNamespaceWaitMs"`
	// RunnerPeakMiB is the largest peak resident memory among the spec
	// runner's processes (Ginkgo and its parallel spec processes).
	RunnerPeakMiB float64 `json:"runnerPeakMiB"`
}

// Write writes bench.json and bench.md of res into dir, and bench.md to w.
func Write(w io.Writer, dir string, res Result) error {
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "bench.json"), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write bench.json: %w", err)
	}
	md := benchMarkdown(res)
	if err := os.WriteFile(filepath.Join(dir, "bench.md"), []byte(md), 0o644); err != nil {
		return fmt.Errorf("write bench.md: %w", err)
	}
	fmt.Fprint(w, md)
	return nil
}

// benchRow is one measurement over a provider's rounds.
type benchRow struct {
	what, provider string
	values         []float64 // milliseconds, one per round
}

// benchRows are the measurements of res, in the order a reader asks for
// them: up, Pods, the suites per --parallel, down.
func benchRows(res Result) []benchRow {
	var rows []benchRow
	for _, p := range res.Providers {
		over := func(what string, value func(roundBench) (float64, bool)) {
			row := benchRow{what: what, provider: p.Provider + " " + p.KubernetesVersion}
			for _, r := range p.Rounds {
				if v, ok := value(r); ok {
					row.values = append(row.values, v)
				}
			}
			if len(row.values) > 0 {
				rows = append(rows, row)
			}
		}
		over("kubeproof up", func(r roundBench) (float64, bool) { return r.UpMs, true })
		over("pod startup p50", func(r roundBench) (float64, bool) { return r.PodStartup.P50, r.PodStartup.N > 0 })
		over("pod startup p99", func(r roundBench) (float64, bool) { return r.PodStartup.P99, r.PodStartup.N > 0 })
		var parallels []int
		for _, r := range p.Rounds {
			for _, s := range r.Suites {
				if !slices.Contains(parallels, s.Parallel) {
					parallels = append(parallels, s.Parallel)
				}
			}
		}
		for _, n := range parallels {
			suite := func(value func(suiteBench) float64) func(roundBench) (float64, bool) {
				return func(r roundBench) (float64, bool) {
					for _, s := range r.Suites {
						if s.Parallel == n {
							return value(s), true
						}
					}
					return 0, false
				}
			}
			over(fmt.Sprintf("suites, --parallel %d", n), suite(func(s suiteBench) float64 { return s.WallMs }))
			over(fmt.Sprintf("  of which the final wait for namespaces (--parallel %d)", n), suite(func(s suiteBench) float64 { return s.FinalWaitMs }))
			over(fmt.Sprintf("  harness setup per spec, p50 (--parallel %d)", n), suite(func(s suiteBench) float64 { return s.Setup.P50 }))
		}
		over("kubeproof down", func(r roundBench) (float64, bool) { return r.DownMs, true })
	}
	if e := res.EndToEnd; e != nil {
		timed := func(what string, rounds []commandRound) {
			row := benchRow{what: fmt.Sprintf("`%s`, end to end, %s", cmp.Or(e.Name, e.Command), what), provider: "the command's own"}
			failed := 0
			for _, r := range rounds {
				row.values = append(row.values, r.WallMs)
				if r.ExitCode != 0 {
					failed++
				}
			}
			if failed > 0 {
				row.what += fmt.Sprintf(" (exit code not 0 in %d of %d: see the logs)", failed, len(rounds))
			}
			if len(rounds) > 0 {
				rows = append(rows, row)
			}
		}
		timed("warm", e.Warm)
		if e.Cold != nil {
			timed("cold (empty kubeproof and Go build caches)", []commandRound{*e.Cold})
		}
	}
	return rows
}

// seconds formats milliseconds as seconds, with more digits below a second
// (the harness's own setup is tens of milliseconds).
func seconds(ms float64) string {
	if ms < 1000 {
		return fmt.Sprintf("%.3f", ms/1000)
	}
	return fmt.Sprintf("%.1f", ms/1000)
}

// benchMarkdown is bench.md: one row per measurement, in seconds, with the
// median, least and most over the rounds.
func benchMarkdown(res Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# kubeproof benchmarks\n\n%s, kubeproof %s, %d CPUs. Seconds: median, least and most over the rounds.\n\n", res.GeneratedAt.Format(time.RFC3339), res.Kubeproof, res.CPUs)
	fmt.Fprintln(&b, "| measurement | cluster | rounds | median | least | most |")
	fmt.Fprintln(&b, "| --- | --- | --- | --- | --- | --- |")
	for _, row := range benchRows(res) {
		d := Summarize(row.values)
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s |\n", row.what, row.provider, d.N, seconds(d.P50), seconds(d.Min), seconds(d.Max))
	}
	for _, p := range res.Providers {
		if len(p.ComponentPeakMiB) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\nPeak resident memory of the %s %s cluster's processes (MiB, last round; a component a spec restarted is not here, its first process is gone):", p.Provider, p.KubernetesVersion)
		for _, n := range slices.Sorted(maps.Keys(p.ComponentPeakMiB)) {
			fmt.Fprintf(&b, " %s %.0f;", n, p.ComponentPeakMiB[n])
		}
		fmt.Fprintln(&b)
	}
	fmt.Fprintf(&b, "\nkubeproof's own peak resident memory: %.0f MiB", res.HarnessPeakMiB)
	for _, p := range res.Providers {
		peak := 0.0
		for _, r := range p.Rounds {
			for _, s := range r.Suites {
				peak = max(peak, s.RunnerPeakMiB)
			}
		}
		if peak > 0 {
			fmt.Fprintf(&b, "; the %s spec runner's largest process: %.0f MiB", p.Provider, peak)
		}
	}
	fmt.Fprintln(&b, ".")
	fmt.Fprintln(&b, "\nPod startup: creation (the create call) to all containers running (the watch event's receipt), this machine's clock; images already on the nodes.")
	fmt.Fprintln(&b, "Harness setup: namespace created and its default ServiceAccount present. The final wait: the suites' end, until every namespace of the run is gone.")
	if res.EndToEnd != nil {
		fmt.Fprintln(&b, "End to end: the whole command, warm after the rounds above; cold with kubeproof's cache and Go's build cache new and empty (Go's module cache and the Debian packages stay: their time is the network's).")
	}
	return b.String()
}
