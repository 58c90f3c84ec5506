package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"
)

// progress reports a long operation's advance (done of total units) with
// its rate and ETA: a redrawn bar on a terminal, plain lines otherwise
// (at most one every few seconds), so logs stay readable in CI.
type progress struct {
	w        io.Writer
	tty      bool
	label    string
	unit     string
	start    time.Time
	lastLine time.Time
	lastDone int64            // done of the last plain line (-1 before the first)
	drawn    bool             // a bar was drawn on the terminal (finish ends its line)
	now      func() time.Time // the clock (tests set it)
}

func newProgress(w io.Writer, label, unit string) *progress {
	tty := false
	if f, ok := w.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	return &progress{w: w, tty: tty, label: label, unit: unit, start: time.Now(), lastDone: -1, now: time.Now}
}

// eta is the time left to do total-done units at rate units per second,
// to the second ("?" when nothing was done yet, "0s" when complete).
func eta(done, total int64, rate float64) string {
	switch {
	case total > 0 && done >= total:
		return "0s"
	case rate > 0 && total > done:
		return time.Duration(float64(total-done) / rate * float64(time.Second)).Round(time.Second).String()
	}
	return "?"
}

// update shows done of total units, the rate since the start (units per
// second) and the ETA; total ≤ 0 shows the count alone.
func (p *progress) update(done, total int64) {
	elapsed := p.now().Sub(p.start)
	rate := 0.0
	if s := elapsed.Seconds(); s > 0 {
		rate = float64(done) / s
	}
	eta := eta(done, total, rate)
	if p.tty {
		const width = 30
		filled := 0
		if total > 0 {
			filled = int(min(done, total) * width / total)
		}
		p.drawn = true
		fmt.Fprintf(p.w, "\r%s [%s%s] %d/%d %s  %.0f %s/s  ETA %s   ", p.label, strings.Repeat("=", filled),
			strings.Repeat(" ", width-filled), done, total, p.unit, rate, p.unit, eta)
		return
	}
	complete := total > 0 && done >= total
	if p.now().Sub(p.lastLine) < 3*time.Second && !(complete && done != p.lastDone) {
		return
	}
	p.lastLine, p.lastDone = p.now(), done
	if total <= 0 { // no lag known yet (the table has not planned): no fraction to show
		fmt.Fprintf(p.w, "%s: %d %s so far, total not known yet\n", p.label, done, p.unit)
		return
	}
	fmt.Fprintf(p.w, "%s: %d/%d %s, %.0f %s/s, ETA %s\n", p.label, done, total, p.unit, rate, p.unit, eta)
}

// line prints msg after the label on a line of its own, instead of a bar
// (e.g. "already caught up").
func (p *progress) line(msg string) {
	fmt.Fprintf(p.w, "%s: %s\n", p.label, msg)
}

// finish ends the bar's line on a terminal, when one was drawn.
func (p *progress) finish() {
	if p.tty && p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
}
