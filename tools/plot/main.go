// Command plot renders a grouped bar chart as SVG from a JSON spec on
// stdin, for the figures in BENCHMARKS.md:
//
//	{"title": "...", "unit": "Recall@10", "series": ["a", "b"],
//	 "groups": [{"label": "x", "values": [0.5, 0.6]}]}
//
// "log": true draws the value axis in powers of ten (for latencies that
// differ by orders of magnitude). Each bar is labelled with its value.
//
// Usage: go run ./tools/plot < spec.json > chart.svg
package main

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math"
	"os"
)

type spec struct {
	Title  string   `json:"title"`
	Unit   string   `json:"unit"`
	Max    float64  `json:"max"` // top of the value axis; default the largest value
	Log    bool     `json:"log"` // logarithmic value axis (values must be positive)
	Series []string `json:"series"`
	Groups []struct {
		Label  string    `json:"label"`
		Values []float64 `json:"values"`
	} `json:"groups"`
}

var palette = []string{"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948"}

func main() {
	var s spec
	if err := json.NewDecoder(os.Stdin).Decode(&s); err != nil {
		fmt.Fprintln(os.Stderr, "plot:", err)
		os.Exit(1)
	}
	if err := render(os.Stdout, &s); err != nil {
		fmt.Fprintln(os.Stderr, "plot:", err)
		os.Exit(1)
	}
}

func render(w io.Writer, s *spec) error {
	const top, plotH, barW, gap = 40.0, 220.0, 18.0, 24.0
	// Slanted labels reach left of their group: leave room for the first.
	left := 60.0
	if len(s.Groups) > 0 {
		left = max(left, 5*float64(len(s.Groups[0].Label))-gap)
	}
	hi := 0.0
	for _, g := range s.Groups {
		if len(g.Values) != len(s.Series) {
			return fmt.Errorf("group %q has %d values for %d series", g.Label, len(g.Values), len(s.Series))
		}
		for _, v := range g.Values {
			hi = max(hi, v)
		}
	}
	if s.Max > 0 {
		hi = max(hi, s.Max)
	}
	if hi == 0 {
		hi = 1
	}
	axis, err := newAxis(s, hi)
	if err != nil {
		return err
	}
	groupW := barW*float64(len(s.Series)) + gap
	width := max(left+groupW*float64(len(s.Groups))+20, left+9*float64(len(s.Title)))
	for _, name := range s.Series {
		width = max(width, left+16+6.5*float64(len(name))) // the legend
	}
	const labelH = 110.0 // room for the slanted group labels
	height := top + plotH + labelH + 16*float64(len(s.Series))
	p := func(f string, a ...any) { fmt.Fprintf(w, f, a...) }
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="11">`+"\n", width, height)
	p(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	p(`<text x="%.0f" y="20" font-size="14" font-weight="bold">%s</text>`+"\n", left, html.EscapeString(s.Title))
	for _, v := range axis.ticks() {
		y := top + plotH - plotH*axis.frac(v)
		p(`<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", left, width-20, y, y)
		p(`<text x="%.0f" y="%.1f" text-anchor="end">%.4g</text>`+"\n", left-6, y+4, v)
	}
	p(`<text x="14" y="%.0f" transform="rotate(-90 14 %.0f)" text-anchor="middle">%s</text>`+"\n", top+plotH/2, top+plotH/2, html.EscapeString(s.Unit))
	for gi, g := range s.Groups {
		x0 := left + gap/2 + groupW*float64(gi)
		for si, v := range g.Values {
			h := plotH * axis.frac(v)
			x := x0 + barW*float64(si)
			p(`<rect x="%.1f" y="%.1f" width="%.0f" height="%.1f" fill="%s"><title>%s %s: %.4g</title></rect>`+"\n",
				x, top+plotH-h, barW-2, h, palette[si%len(palette)], html.EscapeString(g.Label), html.EscapeString(s.Series[si]), v)
			vx, vy := x+barW/2+2, top+plotH-h-3
			p(`<text x="%.1f" y="%.1f" font-size="9" transform="rotate(-90 %.1f %.1f)">%.4g</text>`+"\n", vx, vy, vx, vy, v)
		}
		lx, ly := x0+barW*float64(len(s.Series))/2, top+plotH+14
		p(`<text x="%.1f" y="%.0f" text-anchor="end" transform="rotate(-35 %.1f %.0f)">%s</text>`+"\n", lx, ly, lx, ly, html.EscapeString(g.Label))
	}
	for si, name := range s.Series {
		y := top + plotH + labelH + 16*float64(si)
		p(`<rect x="%.0f" y="%.0f" width="10" height="10" fill="%s"/>`, left, y-9, palette[si%len(palette)])
		p(`<text x="%.0f" y="%.0f">%s</text>`+"\n", left+16, y, html.EscapeString(name))
	}
	p("</svg>\n")
	return nil
}

// axis maps values to [0, 1] of the plot height, linearly from 0 or in
// powers of ten.
type axis struct {
	log    bool
	lo, hi float64 // the range drawn; lo is 0 on a linear axis
}

func newAxis(s *spec, hi float64) (axis, error) {
	if !s.Log {
		return axis{hi: hi}, nil
	}
	lo := math.Inf(1)
	for _, g := range s.Groups {
		for _, v := range g.Values {
			if v <= 0 {
				return axis{}, fmt.Errorf("group %q: value %v on a log axis", g.Label, v)
			}
			lo = min(lo, v)
		}
	}
	return axis{log: true, lo: math.Pow(10, math.Floor(math.Log10(lo))), hi: math.Pow(10, math.Ceil(math.Log10(hi)))}, nil
}

func (a axis) frac(v float64) float64 {
	if a.log {
		return (math.Log10(v) - math.Log10(a.lo)) / (math.Log10(a.hi) - math.Log10(a.lo))
	}
	return v / a.hi
}

func (a axis) ticks() []float64 {
	var out []float64
	if a.log {
		for v := a.lo; v <= a.hi*1.0001; v *= 10 {
			out = append(out, v)
		}
		return out
	}
	for i := 0; i <= 4; i++ {
		out = append(out, a.hi*float64(i)/4)
	}
	return out
}
