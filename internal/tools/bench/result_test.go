package bench

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/internal/jsonschema"
	"github.com/kubeproof/kubeproof/internal/progress"
)

// bench.md has a row per measurement with the median, least and most over
// the rounds, and a row per --parallel value the suites ran with.
func TestBenchMarkdownRows(t *testing.T) {
	round := func(up, wall4, wait4, wall1 float64) roundBench {
		return roundBench{UpMs: up, DownMs: 400, PodStartup: Summarize([]float64{2000, 3000}),
			Suites: []suiteBench{{Parallel: 4, WallMs: wall4, FinalWaitMs: wait4}, {Parallel: 1, WallMs: wall1}}}
	}
	res := Result{Providers: []providerBench{{Provider: "local", KubernetesVersion: "v1.37.2", Rounds: []roundBench{
		round(6100, 178000, 5200, 260000), round(6300, 179000, 5300, 250000), round(6200, 190000, 5100, 270000),
	}}}, EndToEnd: &commandBench{Command: "make run",
		Warm: []commandRound{{WallMs: 181000}, {WallMs: 176000}, {WallMs: 190000, ExitCode: 1}},
		Cold: &commandRound{WallMs: 1203000},
	}}
	md := benchMarkdown(res)
	for _, want := range []string{
		"| kubeproof up | local v1.37.2 | 3 | 6.2 | 6.1 | 6.3 |",
		"| suites, --parallel 4 | local v1.37.2 | 3 | 179.0 | 178.0 | 190.0 |",
		"|   of which the final wait for namespaces (--parallel 4) | local v1.37.2 | 3 | 5.2 | 5.1 | 5.3 |",
		"| suites, --parallel 1 | local v1.37.2 | 3 | 260.0 | 250.0 | 270.0 |",
		"| pod startup p50 | local v1.37.2 | 3 | 2.0 | 2.0 | 2.0 |", // nearest rank: the lower of two
		"| kubeproof down | local v1.37.2 | 3 | 0.400 | 0.400 | 0.400 |",
		"| `make run`, end to end, warm (exit code not 0 in 1 of 3: see the logs) | the command's own | 3 | 181.0 | 176.0 | 190.0 |",
		"| `make run`, end to end, cold (empty kubeproof and Go build caches) | the command's own | 1 | 1203.0 | 1203.0 | 1203.0 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("bench.md lacks %q:\n%s", want, md)
		}
	}
	if strings.Index(md, "kubeproof up") > strings.Index(md, "suites, --parallel 4") || strings.Index(md, "kubeproof down") > strings.Index(md, "end to end, warm") {
		t.Errorf("rows out of order:\n%s", md)
	}
}

// A timed command's output goes to its log, its exit code is recorded (not
// an error), the extra environment reaches it, and the progress ticker can
// show its last line.
func TestTimeCommand(t *testing.T) {
	log := filepath.Join(t.TempDir(), "run.log")
	pr := progress.Discard()
	r, err := timeCommand(context.Background(), pr, "test", `echo "cache $KUBEPROOF_CACHE_DIR"; echo last; exit 3`, log, coldEnv("/empty"))
	if err != nil {
		t.Fatal(err)
	}
	if r.ExitCode != 3 || r.WallMs <= 0 || r.Log != log {
		t.Errorf("got %+v, want exit code 3, a wall time and the log %s", r, log)
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if want := "cache /empty/kubeproof\nlast\n"; string(data) != want {
		t.Errorf("log holds %q, want %q", data, want)
	}
	if got := lastLine(log); got != "last line: last" {
		t.Errorf("lastLine = %q", got)
	}
}

// An interrupt ends the timed command and is the measurement's error.
func TestTimeCommandInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := timeCommand(ctx, progress.Discard(), "test", "sleep 30", filepath.Join(t.TempDir(), "run.log"), nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

// bench.json (Write) is what schemas/output says.
func TestBenchJSONValidates(t *testing.T) {
	round := roundBench{UpMs: 6100, DownMs: 400, PodStartup: Summarize([]float64{2000, 3000}),
		Components: []cluster.ComponentStatus{{Name: "kube-apiserver", Process: "kube-apiserver", PID: 42, Started: time.Unix(1000, 0).UTC(), ReadyIn: 3 * time.Second}},
		Suites:     []suiteBench{{Parallel: 4, WallMs: 178000, FinalWaitMs: 5200, Passed: true, Spec: Summarize([]float64{1, 2})}}}
	res := Result{SchemaVersion: Schema, GeneratedAt: time.Now().UTC(), Kubeproof: "v0.1.0", CPUs: 2, HarnessPeakMiB: 80,
		Providers: []providerBench{{Provider: "local", KubernetesVersion: "v1.37.2", Nodes: 1, Rounds: []roundBench{round},
			ComponentPeakMiB: map[string]float64{"kube-apiserver": 263}}},
		EndToEnd: &commandBench{Command: "make run", Warm: []commandRound{{WallMs: 181000}}, Cold: &commandRound{WallMs: 1203000}}}
	dir := t.TempDir()
	if err := Write(io.Discard, dir, res); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "bench.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := jsonschema.Validate("../../../schemas/output/bench-v1.json", data); err != nil {
		t.Errorf("bench.json: %v\n%s", err, data)
	}
}
