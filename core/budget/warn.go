package budget

import (
	"log/slog"
	"sync"
	"time"
)

// warner logs a refusal at WARN at most once a minute per limit, scope and
// principal; what it remembers is cleared every minute.
type warner struct {
	log    *slog.Logger
	notify func(*Exceeded) // every refusal, when set (Pool.Notify, Rate.Notify)
	mu     sync.Mutex
	seen   map[string]bool
	since  time.Time
}

func newWarner(log *slog.Logger) *warner { return &warner{log: log, seen: map[string]bool{}} }

func (w *warner) once(e *Exceeded, principal string) {
	if w.notify != nil {
		w.notify(e)
	}
	if w.log == nil {
		return
	}
	key := e.Name + "\x00" + string(e.Scope) + "\x00" + principal
	w.mu.Lock()
	if now := time.Now(); now.Sub(w.since) >= time.Minute {
		clear(w.seen)
		w.since = now
	}
	first := !w.seen[key]
	w.seen[key] = true
	w.mu.Unlock()
	if first {
		w.log.Warn("budget: a limit refused a request", "limit", e.Name, "scope", string(e.Scope), "max", e.Max, "principal", principal)
	}
}
