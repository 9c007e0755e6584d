package render

import (
	"fmt"
	"html"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// Bar is one bar of a chart.
type Bar struct {
	Label string
	Value float64
	Text  string // value label; "" means the value with the chart's unit
	Mark  bool   // mcpblob: drawn in the accent colour
}

// BarChart renders a horizontal bar chart as a standalone SVG document
// (hand-written, no dependencies). Bars with value ≤ 0 are drawn empty
// with their text (e.g. "n/a").
func BarChart(title, unit string, bars []Bar) string {
	const (
		width  = 760
		left   = 190
		right  = 130
		top    = 44
		rowH   = 30
		barH   = 20
		bottom = 16
	)
	maxV := 0.0
	for _, b := range bars {
		maxV = math.Max(maxV, b.Value)
	}
	if maxV <= 0 {
		maxV = 1
	}
	height := top + rowH*len(bars) + bottom
	plot := float64(width - left - right)
	var s strings.Builder
	chartHead(&s, title, 13, width, height, left, top, bottom)
	for i, b := range bars {
		y := top + i*rowH
		w := 0.0
		if b.Value > 0 {
			w = math.Max(1, plot*b.Value/maxV)
		}
		fill := "#8aa4c8"
		if b.Mark {
			fill = "#e0662b"
		}
		text := b.Text
		if text == "" {
			text = fmt.Sprintf("%s %s", Human(b.Value), unit)
		}
		chartRow(&s, b.Label, text, fill, left, y, barH, y+barH-5, w)
	}
	s.WriteString("</svg>\n")
	return s.String()
}

// chartHead opens a chart's SVG document: white background, the title (2
// points above the chart's font size) and the axis at x = left.
func chartHead(s *strings.Builder, title string, fontSize, width, height, left, top, bottom int) {
	fmt.Fprintf(s, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif" font-size="%d">`+"\n", width, height, width, height, fontSize)
	fmt.Fprintf(s, `<rect width="100%%" height="100%%" fill="#ffffff"/>`+"\n")
	fmt.Fprintf(s, `<text x="12" y="24" font-size="%d" font-weight="bold" fill="#222">%s</text>`+"\n", fontSize+2, html.EscapeString(title))
	fmt.Fprintf(s, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#999"/>`+"\n", left, top-6, left, height-bottom+4)
}

// chartRow draws one Bar of width w at row y: its label right-aligned
// before the axis, the Bar, and text after the Bar, both texts on the
// baseline textY.
func chartRow(s *strings.Builder, label, text, fill string, left, y, barH, textY int, w float64) {
	fmt.Fprintf(s, `<text x="%d" y="%d" text-anchor="end" fill="#222">%s</text>`+"\n", left-8, textY, html.EscapeString(label))
	fmt.Fprintf(s, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>`+"\n", left, y, w, barH, fill)
	fmt.Fprintf(s, `<text x="%.1f" y="%d" fill="#222">%s</text>`+"\n", float64(left)+w+6, textY, html.EscapeString(text))
}

// Human formats a value with 3 significant digits.
func Human(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// WriteChart writes svg as dir/name, creating dir.
func WriteChart(dir, name, svg string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name), []byte(svg), 0o644)
}

// ratioRow is one run of one pair in a target chart: its ratio divided by
// the wanted ratio (1 is the target line).
type ratioRow struct {
	label string
	value float64 // ratio ÷ want; ≤ 0: no figure
	text  string
	met   bool
}

// ratioChart renders rows as horizontal bars against a vertical target
// line at 1; bars past 2× the target are clipped (their text says the
// figure).
func ratioChart(title string, rows []ratioRow) string {
	const (
		width  = 820
		left   = 260
		right  = 190
		top    = 44
		rowH   = 26
		barH   = 18
		bottom = 26
		clip   = 2.0
	)
	height := top + rowH*len(rows) + bottom
	plot := float64(width - left - right)
	x := func(v float64) float64 { return float64(left) + plot*math.Min(v, clip)/clip }
	var s strings.Builder
	chartHead(&s, title, 12, width, height, left, top, bottom)
	for i, r := range rows {
		y := top + i*rowH
		fill := "#e0662b" // missed
		if r.met {
			fill = "#4f8a4b"
		}
		w := 0.0
		if r.value > 0 {
			w = math.Max(1, x(r.value)-float64(left))
		}
		chartRow(&s, r.label, r.text, fill, left, y, barH, y+barH-4, w)
	}
	lx := x(1)
	fmt.Fprintf(&s, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#222" stroke-dasharray="4 3"/>`+"\n", lx, top-8, lx, height-bottom+4)
	fmt.Fprintf(&s, `<text x="%.1f" y="%d" text-anchor="middle" fill="#222">target</text>`+"\n", lx, height-6)
	s.WriteString("</svg>\n")
	return s.String()
}
