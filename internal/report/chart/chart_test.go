package chart

import (
	"encoding/xml"
	"strings"
	"testing"
)

// A chart is well-formed SVG with a row per item: the label, a bar from
// the axis start to the value on the log axis (1 ms at the axis start, 100
// s at its end), the band behind it, or the note of a row without a value;
// labels are escaped.
func TestLogBars(t *testing.T) {
	svg := LogBars("Pod startup", "median of 5", []Row{
		{Label: "create <pod>", Value: 1000, HasValue: true, Lo: 100, Hi: 10000, ValueTitle: "1 s", BandTitle: "the document's range"},
		{Label: "bound", Note: "not measured"},
		{Label: "open band", Lo: 10},
	})
	if err := xml.Unmarshal([]byte(Document(svg)), new(struct{})); err != nil {
		t.Fatalf("not well-formed: %v\n%s", err, svg)
	}
	for _, want := range []string{
		`aria-label="Pod startup"`, `>median of 5</text>`, `create &lt;pod&gt;`,
		// 1000 ms is 3/5 of the axis: 250 + 520*3/5 = 562.
		`<rect x="250.0" y="7" width="312.0" height="8" fill="#0d47a1"><title>1 s</title></rect>`,
		// The band from 100 ms (458) to 10 s (666).
		`<rect x="458.0" y="2" width="208.0" height="18" fill="#bbdefb">`,
		`>not measured</text>`,
		// An open band runs to the axis end (770) from 10 ms (354).
		`<rect x="354.0" y="54" width="416.0" height="18"`,
		`>1000</text>`,
	} {
		if !strings.Contains(svg, want) {
			t.Errorf("the chart lacks %s", want)
		}
	}
	if strings.Count(svg, `fill="#0d47a1"`) != 1 {
		t.Error("a row without a value has a bar")
	}
	if !strings.HasPrefix(Document(svg), `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<svg xmlns="http://www.w3.org/2000/svg" `) {
		t.Error("a chart file lacks the SVG namespace")
	}
}

func TestNum(t *testing.T) {
	for ms, want := range map[float64]string{0.123: "0.12", 12.34: "12.3", 1234.5: "1234"} {
		if got := Num(ms); got != want {
			t.Errorf("Num(%v) = %s, want %s", ms, got, want)
		}
	}
	if scale(0) != scale(1) || scale(1e9) != left+width {
		t.Error("the axis does not clamp to 1 ms and 100 s")
	}
}
