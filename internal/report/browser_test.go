//go:build browser

package report

// The report as a person sees it: claims.html of a real run, rendered by
// Debian's Chromium (headless) at the window widths people read it in and
// as printed, measured in the page's own DOM. `make browser` runs it (and
// `make test` runs that); it installs chromium and fonts-nanum if they are
// missing (internal/debpkg), so nothing here is skipped.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/fixtures"
	"github.com/kubeproof/kubeproof/internal/debpkg"
	"github.com/kubeproof/kubeproof/internal/progress"
)

var browserOut = flag.String("browser.out", "", "a directory for the rendered report and screenshots of it (kept for reading)")

// minWidths are each column's minimum, in CSS pixels, by table class and
// header: below it a column's text is a few words a line, which nobody
// reads (the issue that made this test: at 1400 px the sentence column of
// the claims table was about 90 px).
var minWidths = map[string]map[string]float64{
	"doc":        {"line": 45, "the document": 480, "decided": 300},
	"claims":     {"claim": 120, "sentence": 330, "verdict": 190, "evidence": 320},
	"timing":     {"claim": 120, "the document": 220, "measured here": 280, "verdict": 100},
	"components": {"component": 110, "seen": 220, "not seen within its window": 220, "refuted claims about it": 160},
}

// A4 landscape with 12 mm margins: 273 mm of paper, 1032 CSS pixels.
const printWidth = 1032

// In print the type is smaller, and so may the columns be.
const printScale = 0.75

type measurement struct {
	InnerWidth  float64 `json:"innerWidth"`
	ScrollWidth float64 `json:"scrollWidth"`
	Columns     []struct {
		Table string  `json:"table"`
		Name  string  `json:"name"`
		Width float64 `json:"width"`
	} `json:"columns"`
	// Overflows are cells whose content is wider than the cell.
	Overflows []struct {
		Text   string  `json:"text"`
		Scroll float64 `json:"scroll"`
		Client float64 `json:"client"`
	} `json:"overflows"`
	Korean bool `json:"korean"`
	// DocViews are where each document's line-by-line view begins.
	DocViews []struct {
		File string  `json:"file"`
		Top  float64 `json:"top"`
	} `json:"docViews"`
	Lines int `json:"lines"`
}

// measureJS reads the laid-out page: its width against the window's, each
// table's header cells, and cells whose content spills.
const measureJS = `(() => {
  const out = {innerWidth: window.innerWidth, scrollWidth: document.documentElement.scrollWidth, columns: [], overflows: [],
    korean: document.fonts.check('16px "NanumGothic"', '가'), lines: document.querySelectorAll('table.doc tr').length - 1};
  out.docViews = [...document.querySelectorAll('h2[id^="doc-"]')].map(h => ({file: h.id.slice(4), top: h.getBoundingClientRect().top + window.scrollY}));
  for (const table of document.querySelectorAll('table')) {
    const name = table.className || "table";
    for (const th of table.rows[0].cells) out.columns.push({table: name, name: th.textContent.trim(), width: th.getBoundingClientRect().width});
  }
  for (const td of document.querySelectorAll('td')) {
    if (td.scrollWidth > td.clientWidth + 1) out.overflows.push({text: td.textContent.trim().slice(0, 80), scroll: td.scrollWidth, client: td.clientWidth});
  }
  return out;
})()`

func TestReportInBrowser(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := debpkg.Ensure(ctx, debpkg.Browser, progress.New(os.Stderr)); err != nil {
		t.Fatalf("the browser test needs Debian's chromium and fonts-nanum: %v", err)
	}
	dir := *browserOut
	if dir == "" {
		dir = t.TempDir()
	}
	page := writeRealReport(t, dir)

	b := startBrowser(ctx, t)
	defer func() {
		if log := b.close(); t.Failed() {
			t.Logf("chromium's log:\n%s", log)
		}
	}()
	for _, view := range []struct {
		name  string
		width float64
		print bool
	}{{"1280", 1280, false}, {"1400", 1400, false}, {"print", printWidth, true}} {
		m, shots := b.render(ctx, t, page, view.width, view.print)
		t.Logf("%s: window %.0f px, page %.0f px, %d document lines, Korean font: %v", view.name, m.InnerWidth, m.ScrollWidth, m.Lines, m.Korean)
		if m.ScrollWidth > m.InnerWidth {
			t.Errorf("%s: the page is %.0f px wide in a %.0f px window", view.name, m.ScrollWidth, m.InnerWidth)
		}
		if !m.Korean {
			t.Errorf("%s: no Korean font (NanumGothic) for the documents' lines", view.name)
		}
		if len(m.DocViews) != 5 {
			t.Errorf("%s: %d documents have a line-by-line view, want the five seeds", view.name, len(m.DocViews))
		}
		if m.Lines < 300 {
			t.Errorf("%s: the document view has %d lines; a full run's five documents have more than 300", view.name, m.Lines)
		}
		seen := map[string]bool{}
		for _, c := range m.Columns {
			min, ok := minWidths[c.Table][c.Name]
			if !ok {
				continue
			}
			if view.print {
				min *= printScale
			}
			key := c.Table + "/" + c.Name
			if !seen[key] {
				t.Logf("  %-40s %4.0f px (min %3.0f)", key, c.Width, min)
				seen[key] = true
			}
			if c.Width < min {
				t.Errorf("%s: column %q of table %s is %.0f px, narrower than its minimum %.0f px", view.name, c.Name, c.Table, c.Width, min)
			}
		}
		for table, cols := range minWidths {
			for name := range cols {
				if !seen[table+"/"+name] {
					t.Errorf("%s: no column %q in a table %s: the report's layout changed, or the test's minimums are stale", view.name, name, table)
				}
			}
		}
		for _, o := range m.Overflows {
			t.Errorf("%s: a cell's content is %.0f px wide in a %.0f px cell: %q", view.name, o.Scroll, o.Client, o.Text)
		}
		for name, png := range shots {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%s.png", name, view.name)), png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Logf("claims.html and screenshots: %s", dir)
}

// writeRealReport writes the reports of the real run into dir, its
// documents' lines decided with this catalog, and returns claims.html.
func writeRealReport(t *testing.T, dir string) string {
	t.Helper()
	r := loadRealRun(t)
	cat, err := claims.Load(fixtures.Claims())
	if err != nil {
		t.Fatal(err)
	}
	if err := r.AddLines(cat, fixtures.Seeds(), fixtures.Sentences()); err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, r); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "claims.html")
}

// browser is headless Chromium driven over the DevTools protocol on a
// pipe (--remote-debugging-pipe: fd 3 in, fd 4 out, messages ended by
// NUL), so that no port is opened and no client library is needed.
type browser struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	mu     sync.Mutex
	nextID int
	waits  map[int]chan cdpMessage
	events chan cdpMessage
	stderr bytes.Buffer
}

type cdpMessage struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

func startBrowser(ctx context.Context, t *testing.T) *browser {
	t.Helper()
	toChrome, ourEnd, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	fromChrome, chromeEnd, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	b := &browser{in: ourEnd, waits: map[int]chan cdpMessage{}, events: make(chan cdpMessage, 256)}
	b.cmd = exec.CommandContext(ctx, "/usr/bin/chromium", "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--no-first-run", "--hide-scrollbars", "--remote-debugging-pipe",
		"--user-data-dir="+t.TempDir(), "about:blank")
	b.cmd.ExtraFiles = []*os.File{toChrome, chromeEnd}
	b.cmd.Stderr = &b.stderr
	if err := b.cmd.Start(); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	toChrome.Close()
	chromeEnd.Close()
	go b.read(fromChrome)
	return b
}

func (b *browser) read(r io.Reader) {
	br := bufio.NewReader(r)
	for {
		data, err := br.ReadBytes(0)
		if err != nil {
			close(b.events)
			return
		}
		var m cdpMessage
		if json.Unmarshal(data[:len(data)-1], &m) != nil {
			continue
		}
		if m.ID != 0 {
			b.mu.Lock()
			ch := b.waits[m.ID]
			delete(b.waits, m.ID)
			b.mu.Unlock()
			if ch != nil {
				ch <- m
			}
			continue
		}
		select {
		case b.events <- m:
		default: // nobody waits for it
		}
	}
}

// call sends a command (to a page's session, if given) and returns its
// result.
func (b *browser) call(ctx context.Context, session, method string, params any, result any) error {
	b.mu.Lock()
	b.nextID++
	id := b.nextID
	ch := make(chan cdpMessage, 1)
	b.waits[id] = ch
	b.mu.Unlock()
	msg := map[string]any{"id": id, "method": method, "params": params}
	if session != "" {
		msg["sessionId"] = session
	}
	data, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	if _, err := b.in.Write(append(data, 0)); err != nil {
		return fmt.Errorf("%s: %w (chromium: %s)", method, err, b.stderr.String())
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return fmt.Errorf("%s: %s", method, m.Error.Message)
		}
		if result != nil {
			return json.Unmarshal(m.Result, result)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: no answer: %w (chromium: %s)", method, ctx.Err(), b.stderr.String())
	}
}

// render loads page in a new tab of the given width (as printed, if
// print), measures it, and takes screenshots: the top of the page and the
// document view.
func (b *browser) render(ctx context.Context, t *testing.T, page string, width float64, print bool) (measurement, map[string][]byte) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	var target struct {
		TargetID string `json:"targetId"`
	}
	must(b.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target))
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	must(b.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached))
	s := attached.SessionID
	defer func() { _ = b.call(ctx, "", "Target.closeTarget", map[string]any{"targetId": target.TargetID}, nil) }()
	must(b.call(ctx, s, "Page.enable", map[string]any{}, nil))
	must(b.call(ctx, s, "Emulation.setDeviceMetricsOverride", map[string]any{"width": int(width), "height": 2000, "deviceScaleFactor": 1, "mobile": false}, nil))
	if print {
		must(b.call(ctx, s, "Emulation.setEmulatedMedia", map[string]any{"media": "print"}, nil))
	}
	must(b.call(ctx, s, "Page.navigate", map[string]any{"url": "file://" + page}, nil))
	loaded := false
	for !loaded {
		select {
		case e, ok := <-b.events:
			if !ok {
				t.Fatalf("chromium ended: %s", b.stderr.String())
			}
			loaded = e.SessionID == s && e.Method == "Page.loadEventFired"
		case <-ctx.Done():
			t.Fatalf("claims.html did not load: %v", ctx.Err())
		}
	}
	var eval struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails any `json:"exceptionDetails"`
	}
	must(b.call(ctx, s, "Runtime.evaluate", map[string]any{"expression": "document.fonts.ready.then(() => " + measureJS + ")",
		"returnByValue": true, "awaitPromise": true}, &eval))
	if eval.ExceptionDetails != nil {
		t.Fatalf("measuring the page: %v", eval.ExceptionDetails)
	}
	var m measurement
	must(json.Unmarshal(eval.Result.Value, &m))
	// The top of the page, and each document's view (from its heading).
	shots := map[string][]byte{}
	tops := map[string]float64{"claims": 0}
	for _, d := range m.DocViews {
		tops["document-"+strings.SplitN(d.File, "_", 2)[0]] = d.Top - 10
	}
	for name, y := range tops {
		var shot struct {
			Data string `json:"data"`
		}
		must(b.call(ctx, s, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true,
			"clip": map[string]any{"x": 0, "y": y, "width": width, "height": 2000, "scale": 1}}, &shot))
		png, err := base64.StdEncoding.DecodeString(shot.Data)
		must(err)
		shots[name] = png
	}
	return m, shots
}

// close ends the browser and returns its log.
func (b *browser) close() string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = b.call(ctx, "", "Browser.close", map[string]any{}, nil)
	b.in.Close()
	done := make(chan error, 1)
	go func() { done <- b.cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = b.cmd.Process.Kill()
		err = <-done
	}
	if err != nil {
		fmt.Fprintf(&b.stderr, "\nchromium ended: %v", err)
	}
	return strings.TrimSpace(b.stderr.String())
}
