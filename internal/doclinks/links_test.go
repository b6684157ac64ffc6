package doclinks

import (
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	// inlineLink is [text](target) and ![alt](target), with an optional
	// "title" after the target.
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	// refLink is a reference definition: [label]: target
	refLink = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$`)
	// inlineCode is `code`, where a bracket is not a link.
	inlineCode = regexp.MustCompile("`[^`]*`")
	// escaped is a backslash-escaped character: an escaped bracket is
	// text, not a link (how docs/sentences.md quotes the seeds' links).
	escaped = regexp.MustCompile(`\\.`)
)

// Directories that hold no Markdown of the project's own.
var skipDirs = map[string]bool{".git": true, "_output": true, "node_modules": true, "vendor": true}

func TestRelativeLinksResolve(t *testing.T) {
	root := repoRoot(t)
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skipDirs[d.Name()] || (path != root && strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".md") {
			return nil
		}
		files++
		rel, _ := filepath.Rel(root, path)
		for _, l := range links(t, path) {
			if !resolves(root, path, l.target) {
				t.Errorf("%s:%d: link %q leads nowhere", rel, l.line, l.target)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 10 {
		t.Fatalf("found only %d Markdown files under %s", files, root)
	}
}

type link struct {
	line   int
	target string
}

// links are the relative link targets of a Markdown file, outside code.
func links(t *testing.T, path string) []link {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []link
	fenced := false
	for i, line := range strings.Split(string(data), "\n") {
		if trimmed := strings.TrimSpace(line); strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		line = escaped.ReplaceAllString(inlineCode.ReplaceAllString(line, ""), "")
		var targets []string
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			targets = append(targets, m[1])
		}
		if m := refLink.FindStringSubmatch(line); m != nil {
			targets = append(targets, m[1])
		}
		for _, target := range targets {
			if relative(target) {
				out = append(out, link{line: i + 1, target: target})
			}
		}
	}
	return out
}

// relative reports whether target names a file of the repository (not a
// URL, nor an anchor of the same page).
func relative(target string) bool {
	if strings.HasPrefix(target, "#") {
		return false
	}
	u, err := url.Parse(target)
	return err != nil || u.Scheme == "" && u.Host == ""
}

// resolves reports whether target, relative to the file from (or to the
// repository root, when it starts with /), is a file or directory.
func resolves(root, from, target string) bool {
	p, _, _ := strings.Cut(target, "#")
	p, _, _ = strings.Cut(p, "?")
	if unescaped, err := url.PathUnescape(p); err == nil {
		p = unescaped
	}
	if p == "" {
		return true
	}
	var full string
	if strings.HasPrefix(p, "/") {
		full = filepath.Join(root, p)
	} else {
		full = filepath.Join(filepath.Dir(from), p)
	}
	_, err := os.Stat(full)
	return err == nil
}

// repoRoot is the directory of go.mod, above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// The reader finds links and images, inline and by reference, and leaves
// out URLs, anchors of the page, what is inside code and escaped brackets
// (a quoted link).
func TestFindsLinks(t *testing.T) {
	md := filepath.Join(t.TempDir(), "page.md")
	text := "see [a](a.md#part) and ![b](img/b.png \"title\"), [web](https://example.invalid/x.md), [here](#top)\n" +
		"`[not](code.md)`\n```\n[not](fenced.md)\n```\n[ref]: ../c.md\n" +
		"| 5 | !\\[](/images/quoted.png) \\[also](quoted.md) |\n"
	if err := os.WriteFile(md, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range links(t, md) {
		got = append(got, l.target)
	}
	if strings.Join(got, " ") != "a.md#part img/b.png ../c.md" {
		t.Errorf("links %q", got)
	}
}
