// Command quickstart runs the README's quick starts as a newcomer would
// type them (make quickstart, part of make test). README.md marks each with
// an HTML comment before its code block:
//
//	<!-- quickstart: cluster -->        the block runs against a local cluster
//	                                    made for it, as "your cluster" of
//	                                    $HOME/.kube/config
//	<!-- quickstart: document -->       the block runs in an empty directory
//	                                    (as root: its run makes a local cluster)
//	<!-- quickstart: ci FILE -->        the block's lines stand in FILE, in
//	                                    order (make action runs FILE)
//
// Each block runs verbatim with bash -euo pipefail, kubeproof of this
// checkout first on PATH (as an installed release would be), in a new
// directory; then what it left is checked (its report directory: the
// specs that ran, the verdicts). Exit codes: 0 every quick start worked,
// 1 one did not, 2 usage.
//
//	quickstart [--readme README.md] [--bin _output/bin] [--out DIR] [--only a,b]
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// block is a quick start of the README.
type block struct {
	name, arg string
	line      int
	text      string
}

// blocks reads the marked code blocks of the README.
func blocks(readme string) ([]block, error) {
	f, err := os.Open(readme)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []block
	var cur *block
	inBlock := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		switch {
		case cur != nil && !inBlock && strings.HasPrefix(l, "```"):
			inBlock, cur.line = true, n+1
		case cur != nil && inBlock && strings.HasPrefix(l, "```"):
			out = append(out, *cur)
			cur, inBlock = nil, false
		case cur != nil && inBlock:
			cur.text += l + "\n"
		case strings.HasPrefix(l, "<!-- quickstart: "):
			f := strings.Fields(strings.TrimSuffix(strings.TrimPrefix(l, "<!-- quickstart: "), "-->"))
			cur = &block{name: f[0]}
			if len(f) > 1 {
				cur.arg = f[1]
			}
		}
	}
	return out, sc.Err()
}

func main() { os.Exit(run()) }

func run() int {
	fs := flag.NewFlagSet("quickstart", flag.ContinueOnError)
	readme := fs.String("readme", "README.md", "the README")
	bin := fs.String("bin", "_output/bin", "the directory of this checkout's kubeproof")
	out := fs.String("out", "_output/quickstart", "where each quick start runs")
	only := fs.String("only", "", "run only these quick starts (comma-separated)")
	if err := fs.Parse(os.Args[1:]); err != nil || fs.NArg() > 0 {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	bs, err := blocks(*readme)
	if err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		return 1
	}
	binDir, _ := filepath.Abs(*bin)
	outDir, _ := filepath.Abs(*out)
	failed := 0
	seen := map[string]bool{}
	for _, b := range bs {
		seen[b.name] = true
		if *only != "" && !slices.Contains(strings.Split(*only, ","), b.name) {
			continue
		}
		fmt.Printf("\n== quick start %q (README.md line %d)\n", b.name, b.line)
		start := time.Now()
		var problems []string
		switch b.name {
		case "ci":
			problems = standsIn(b)
		case "cluster":
			problems = clusterStart(ctx, b, binDir, filepath.Join(outDir, b.name))
		case "document":
			problems = documentStart(ctx, b, binDir, filepath.Join(outDir, b.name))
		default:
			problems = []string{"no check for a quick start named " + b.name}
		}
		for _, p := range problems {
			fmt.Println("  PROBLEM", p)
		}
		fmt.Printf("  %s in %.1f s\n", map[bool]string{true: "worked", false: "FAILED"}[len(problems) == 0], time.Since(start).Seconds())
		if len(problems) > 0 {
			failed++
		}
	}
	for _, want := range []string{"cluster", "ci", "document"} {
		if !seen[want] {
			fmt.Printf("  PROBLEM README.md has no quick start %q\n", want)
			failed++
		}
	}
	if failed > 0 {
		fmt.Printf("\nquickstart: %d quick starts did not work\n", failed)
		return 1
	}
	fmt.Println("\nquickstart: every quick start worked as written")
	return 0
}

// standsIn checks that the block's lines stand in the file it names, in
// order, as written: the README shows part of a recipe make action runs.
func standsIn(b block) []string {
	data, err := os.ReadFile(b.arg)
	if err != nil {
		return []string{err.Error()}
	}
	lines := strings.Split(string(data), "\n")
	i := 0
	for _, l := range strings.Split(strings.TrimRight(b.text, "\n"), "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		for i < len(lines) && lines[i] != l {
			i++
		}
		if i == len(lines) {
			return []string{fmt.Sprintf("the line %q is not in %s (after the lines before it)", l, b.arg)}
		}
	}
	fmt.Printf("  its %d lines stand in %s, in order\n", strings.Count(b.text, "\n"), b.arg)
	return nil
}

// shell runs the block with bash in dir, kubeproof of bin first on PATH.
func shell(ctx context.Context, b block, bin, dir string, env ...string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", b.text)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH")), env...)
	log, err := os.Create(filepath.Join(dir, "..", b.name+".log"))
	if err != nil {
		return err
	}
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	fmt.Fprintf(log, "$ (README.md line %d, in %s)\n%s\n", b.line, dir, b.text)
	err = cmd.Run()
	fmt.Printf("  ran in %s: %v (log %s)\n", dir, map[bool]any{true: "exit 0", false: err}[err == nil], log.Name())
	return err
}
