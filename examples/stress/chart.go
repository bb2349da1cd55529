package main

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

var (
	green = color.RGBA{R: 0x1a, G: 0x98, B: 0x50, A: 0xff}
	red   = color.RGBA{R: 0xd7, G: 0x30, B: 0x27, A: 0xff}
	gray  = color.RGBA{R: 0x60, G: 0x60, B: 0x60, A: 0xff}
)

// writeChart draws what the server admitted and refused each second, one
// panel per run on the same scale, and returns the path written.
func writeChart(o options, naive, throttled *result) (string, error) {
	seconds := int(math.Ceil((o.duration / 2).Seconds()))
	runs := []*result{naive, throttled}
	ymax := o.rate
	for _, r := range runs {
		for _, p := range r.server.Series {
			ymax = max(ymax, float64(p.Admitted), float64(p.Refused))
		}
	}

	var plots [][]*plot.Plot
	for _, r := range runs {
		p, err := panel(o, r, seconds, ymax*1.3) // headroom for the legend
		if err != nil {
			return "", err
		}
		plots = append(plots, []*plot.Plot{p})
	}

	img := vgimg.NewWith(vgimg.UseWH(8*vg.Inch, 7*vg.Inch), vgimg.UseDPI(120))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadX: vg.Millimeter, PadY: 6 * vg.Millimeter,
		PadTop: 3 * vg.Millimeter, PadBottom: 3 * vg.Millimeter, PadLeft: 3 * vg.Millimeter, PadRight: 5 * vg.Millimeter}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		plots[i][0].Draw(canvases[i][0])
	}

	path := outPath(o.out)
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return path, nil
}

// panel plots one run's per-second series.
func panel(o options, r *result, seconds int, ymax float64) (*plot.Plot, error) {
	admitted := make(plotter.XYs, seconds+1)
	refused := make(plotter.XYs, seconds+1)
	for i := range admitted {
		admitted[i].X, refused[i].X = float64(i), float64(i)
	}
	for _, p := range r.server.Series {
		if p.Second < seconds {
			admitted[p.Second].Y = float64(p.Admitted)
			refused[p.Second].Y = float64(p.Refused)
		}
	}
	// The last point only closes the last step.
	admitted[seconds].Y = admitted[seconds-1].Y
	refused[seconds].Y = refused[seconds-1].Y

	p := plot.New()
	p.Title.Text = title(o, r)
	p.X.Label.Text = "seconds"
	p.Y.Label.Text = "requests per second"
	p.X.Min, p.X.Max = 0, float64(seconds)
	p.Y.Min, p.Y.Max = 0, ymax
	p.Add(plotter.NewGrid())

	for _, s := range []struct {
		name string
		xys  plotter.XYs
		c    color.Color
	}{
		{"200 OK", admitted, green},
		{"429", refused, red},
	} {
		l, err := plotter.NewLine(s.xys)
		if err != nil {
			return nil, err
		}
		l.StepStyle = plotter.PostStep
		l.Color = s.c
		l.Width = vg.Points(2)
		p.Add(l)
		p.Legend.Add(s.name, l)
	}
	quota := plotter.NewFunction(func(float64) float64 { return o.rate })
	quota.Color = gray
	quota.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	quota.Width = vg.Points(1)
	p.Add(quota)
	p.Legend.Add(fmt.Sprintf("quota (%g/s)", o.rate), quota)

	p.Legend.Top = true
	p.Legend.Left = false
	return p, nil
}

func title(o options, r *result) string {
	c := r.server.Counts
	who := fmt.Sprintf("naive: %d tabs, own clients, %v pause after a 429", o.tabs, o.naivePause)
	if r.name == "throttled" {
		who = fmt.Sprintf("throttled: %d tabs sharing one throttle.Transport", o.tabs)
	}
	return fmt.Sprintf("%s\n%d requests, %d × 200, %d × 429 (%s, %s headers)",
		who, c.Total(), c.Admitted, c.Refused, algorithmName(o.algorithm), dialectName(o.dialect))
}
