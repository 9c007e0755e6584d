package budget

import (
	"log/slog"
	"sync"
	"time"
)

// Rate admits at most perMinute events per principal in each minute (a
// fixed window per principal, opened by its first event). Safe for
// concurrent use.
type Rate struct {
	name      string
	perMinute int64
	now       func() time.Time
	warn      *warner
	mu        sync.Mutex
	windows   map[string]*window
	swept     time.Time
}

type window struct {
	start time.Time
	n     int64
}

// NewRate returns a rate named name admitting perMinute events per
// principal a minute (0 or less: every event); refusals are logged to log.
func NewRate(name string, perMinute int64, log *slog.Logger) *Rate {
	return &Rate{name: name, perMinute: perMinute, now: time.Now, warn: newWarner(log), windows: map[string]*window{}}
}

// Notify makes f see every refusal of the rate; call it before the rate
// is shared.
func (r *Rate) Notify(f func(*Exceeded)) { r.warn.notify = f }

// Allow counts one event of principal, or returns an *Exceeded, with the
// time until the principal's window ends, when the window is full.
func (r *Rate) Allow(principal string) error {
	if r.perMinute <= 0 {
		return nil
	}
	r.mu.Lock()
	now := r.now()
	r.sweep(now)
	w := r.windows[principal]
	if w == nil || now.Sub(w.start) >= time.Minute {
		w = &window{start: now}
		r.windows[principal] = w
	}
	var e *Exceeded
	if w.n >= r.perMinute {
		e = &Exceeded{Name: r.name, Scope: PerPrincipal, Max: r.perMinute, RetryAfter: w.start.Add(time.Minute).Sub(now)}
	} else {
		w.n++
	}
	r.mu.Unlock()
	if e != nil {
		r.warn.once(e, principal)
		return e
	}
	return nil
}

// sweep drops, at most once a minute, the windows that ended: the map
// holds only principals seen in the last two minutes.
func (r *Rate) sweep(now time.Time) {
	if now.Sub(r.swept) < time.Minute {
		return
	}
	r.swept = now
	for p, w := range r.windows {
		if now.Sub(w.start) >= time.Minute {
			delete(r.windows, p)
		}
	}
}
