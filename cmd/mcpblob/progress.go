package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// progressBar draws "done / total [====>   ] pct rate ETA" on a terminal,
// redrawn at most ten times a second. newProgressBar returns nil when w is
// not a terminal, and a nil bar draws nothing, so piped output stays plain.
type progressBar struct {
	w     io.Writer
	label string
	start time.Time
	last  time.Time
}

func newProgressBar(f *os.File, label string) *progressBar {
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	return &progressBar{w: f, label: label, start: time.Now()}
}

// update is a client.Progress.
func (p *progressBar) update(done, total int64) {
	if p == nil {
		return
	}
	now := time.Now()
	if now.Sub(p.last) < 100*time.Millisecond && done != total {
		return
	}
	p.last = now
	elapsed := now.Sub(p.start).Seconds()
	rate := 0.0
	if elapsed > 0 {
		rate = float64(done) / elapsed
	}
	line := fmt.Sprintf("%s %s", p.label, humanBytes(done))
	if total > 0 {
		frac := float64(done) / float64(total)
		const width = 24
		filled := int(frac * width)
		bar := strings.Repeat("=", filled) + strings.Repeat(" ", width-filled)
		eta := "?"
		if rate > 0 {
			eta = time.Duration(float64(total-done) / rate * float64(time.Second)).Round(time.Second).String()
		}
		line += fmt.Sprintf(" / %s [%s] %3.0f%% %s/s ETA %s", humanBytes(total), bar, frac*100, humanBytes(int64(rate)), eta)
	} else {
		line += fmt.Sprintf(" %s/s", humanBytes(int64(rate)))
	}
	fmt.Fprintf(p.w, "\r%-100s", line)
}

// finish ends the bar's line.
func (p *progressBar) finish() {
	if p != nil {
		fmt.Fprintln(p.w)
	}
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
