package exhaust

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/wire"
)

// Phase is how one phase went: the requests sent and how each was
// answered, the problems found (grouped, with one example each), and the
// bounds the state kept must stay within.
type Phase struct {
	Name                    string
	Elapsed                 time.Duration
	Sent, Accepted, Refused int
	Unclear, ServerErrors   int
	Bounds                  []Bound
	Notes                   []string
	mu                      sync.Mutex
	problems                map[string]*Problem
	order                   []string
}

// Bound is what the server kept of one kind of state, and its limit.
type Bound struct {
	What        string
	Held, Limit int64
	Bytes       bool // Held and Limit count bytes, not items
}

// Broken reports whether the server kept more than the limit.
func (b Bound) Broken() bool { return b.Held > b.Limit }

// Problem is one kind of unclear or server-error answer: how many, and
// the first example.
type Problem struct {
	Input, What string
	N           int
}

func newPhase(name string) *Phase { return &Phase{Name: name, problems: map[string]*Problem{}} }

// judged records one answer's verdict; input names the request kind.
func (p *Phase) judged(input string, v wire.Verdict, why string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.Sent++
	switch v {
	case wire.Accepted:
		p.Accepted++
	case wire.Clear:
		p.Refused++
	case wire.ServerError:
		p.ServerErrors++
		p.problem(input, "server error: "+why)
	default:
		p.Unclear++
		p.problem(input, "unclear: "+why)
	}
}

// String is the problem with its count.
func (p *Problem) String() string { return fmt.Sprintf("%d× %s", p.N, p.What) }

// problem counts a problem under its kind: the input and the reason up to
// its second colon (so one finding stands for many alike); p.mu is held.
func (p *Phase) problem(input, what string) {
	kind, _, _ := strings.Cut(what, ": ")
	if rest, ok := strings.CutPrefix(what, kind+": "); ok {
		k2, _, _ := strings.Cut(rest, ": ")
		kind += ": " + k2
	}
	key := input + "\x00" + kind
	if x := p.problems[key]; x != nil {
		x.N++
		return
	}
	p.problems[key] = &Problem{Input: input, What: what, N: 1}
	p.order = append(p.order, key)
}

// fail records a problem that is not an answer's verdict (a request the
// phase needed that failed).
func (p *Phase) fail(input, what string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.Unclear++
	p.problem(input, what)
}

// Problems lists the problems in the order first seen.
func (p *Phase) Problems() []Problem {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Problem, 0, len(p.order))
	for _, k := range p.order {
		out = append(out, *p.problems[k])
	}
	return out
}

func (p *Phase) note(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.Notes = append(p.Notes, fmt.Sprintf(format, args...))
}

// statuses counts answers by HTTP status, for notes.
type statuses struct {
	mu sync.Mutex
	n  map[int]int
}

func (s *statuses) add(code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n == nil {
		s.n = map[int]int{}
	}
	s.n[code]++
}

func (s *statuses) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var parts []string
	for code, n := range s.n {
		label := fmt.Sprint(code)
		if code == 0 {
			label = "no answer"
		} else if t := http.StatusText(code); t != "" {
			label += " " + t
		}
		parts = append(parts, fmt.Sprintf("%d× %s", n, label))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// parallel runs f(0…n-1) on workers goroutines, stopping early when stop
// reports true.
func parallel(n, workers int, stop func() bool, f func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(workers, max(n, 1)) {
		wg.Go(func() {
			for i := range next {
				f(i)
			}
		})
	}
	for i := range n {
		if stop() {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
}
