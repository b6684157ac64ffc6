// Package chart draws the millisecond charts of kubeproof's reports as
// inline SVG: one row per item, on a logarithmic axis from 1 ms to 100 s
// (stages of a Pod's creation span four orders of magnitude).
package chart

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// Row is one line of a chart: a measured value (a dark bar from the axis
// start) and an optional range (a light band behind it).
type Row struct {
	Label    string
	Value    float64
	HasValue bool
	Lo, Hi   float64 // the band; Hi 0 means open-ended, both 0 no band
	// ValueTitle and BandTitle are the tooltips.
	ValueTitle, BandTitle string
	// Note is written in the row when it has no value.
	Note string
}

const (
	left, width, rowH = 250.0, 520.0, 26.0
)

func scale(ms float64) float64 {
	if ms < 1 {
		ms = 1
	}
	return left + width*math.Min(math.Log10(ms), 5)/5
}

// LogBars returns an SVG element with rows, for inline use in HTML; aria
// names the chart, and caption, if not empty, is written under the axis
// (a chart saved as a file has no page around it to explain it).
func LogBars(aria, caption string, rows []Row) string {
	var b strings.Builder
	h := rowH * float64(len(rows))
	extra := 0.0
	if caption != "" {
		extra = 18
	}
	fmt.Fprintf(&b, `<svg width="%.0f" height="%.0f" role="img" aria-label="%s" font-family="sans-serif">`,
		left+width+60, h+30+extra, html.EscapeString(aria))
	if caption != "" {
		fmt.Fprintf(&b, `<text x="0" y="%.0f" font-size="11" fill="#444">%s</text>`, h+40, html.EscapeString(caption))
	}
	for i, ms := range []float64{1, 10, 100, 1000, 10000, 100000} {
		x := scale(ms)
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="0" y2="%.0f" stroke="#ddd"/><text x="%.1f" y="%.0f" font-size="10">%s</text>`,
			x, x, h, x-8, h+14, []string{"1ms", "10ms", "100ms", "1s", "10s", "100s"}[i])
	}
	for i, r := range rows {
		y := rowH * float64(i)
		fmt.Fprintf(&b, `<text x="0" y="%.0f" font-size="12">%s</text>`, y+16, html.EscapeString(r.Label))
		if r.Lo != 0 || r.Hi != 0 {
			lo, hi := scale(r.Lo), scale(r.Hi)
			if r.Hi == 0 {
				hi = left + width
			}
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.0f" width="%.1f" height="18" fill="#bbdefb"><title>%s</title></rect>`,
				lo, y+2, math.Max(hi-lo, 1), html.EscapeString(r.BandTitle))
		}
		if !r.HasValue && r.Note != "" {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" font-size="10" fill="#777">%s</text>`, left+4, y+15, html.EscapeString(r.Note))
		}
		if r.HasValue {
			x := scale(r.Value)
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.0f" width="%.1f" height="8" fill="#0d47a1"><title>%s</title></rect>`,
				left, y+7, math.Max(x-left, 1), html.EscapeString(r.ValueTitle))
			fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" font-size="10">%s</text>`, x+4, y+15, Num(r.Value))
		}
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// Num formats milliseconds for a label.
func Num(ms float64) string {
	switch {
	case ms >= 100:
		return fmt.Sprintf("%.0f", ms)
	case ms >= 10:
		return fmt.Sprintf("%.1f", ms)
	default:
		return fmt.Sprintf("%.2f", ms)
	}
}

// Document makes an SVG element from LogBars a file of its own (which needs
// the SVG namespace; inline SVG in HTML does not).
func Document(svg string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		strings.Replace(svg, "<svg ", `<svg xmlns="http://www.w3.org/2000/svg" `, 1) + "\n"
}
