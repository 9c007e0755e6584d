package load

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
	"github.com/tsenart/vegeta/v12/lib/plot"
)

// Scenario is one open-model load: Rate requests per second for Duration,
// each built by Target and judged by Check.
type Scenario struct {
	Name     string
	Rate     int           // requests per second (constant arrival rate)
	Duration time.Duration // how long requests are started
	Hits     int           // with Rate 0: this many requests, one at a time, back to back
	// Workers and MaxWorkers are vegeta's initial and most concurrent
	// requests; 0 means 10 and no cap.
	Workers, MaxWorkers uint64
	Timeout             time.Duration // per request (default 30 s)
	Target              vegeta.Targeter
	// Check judges one answer: "" when it is right, else its error class.
	// Nil accepts any 2xx.
	Check      func(r *vegeta.Result, b *Body) string
	KeepBody   int64 // bytes of each body handed to Check in r.Body (default 64 KiB; < 0: none)
	DecodeBlob bool  // hash the base64 "blob" of each answer into Body.BlobSHA
	Redirects  int   // redirects followed (default none: a 3xx is the answer)
	P99        time.Duration
	// FollowDownload GETs the downloadUrl of a JSON resources/stream answer
	// (the server's url mode) as part of the same request.
	FollowDownload bool
	// OnResult, when set, sees every result, what the transport saw of
	// its body, and its class after Check.
	OnResult func(r *vegeta.Result, b *Body, class string)
}

// Run runs s against whatever its Target names and returns the report.
// The attack stops early when ctx ends.
func Run(ctx context.Context, s Scenario) *Report {
	var next http.RoundTripper = transport()
	if s.FollowDownload {
		next = followDownload{next}
	}
	obs := &observer{next: next, decode: s.DecodeBlob}
	keep := s.KeepBody
	switch {
	case keep == 0:
		keep = 64 << 10
	case keep < 0:
		keep = 0 // vegeta reads and drops the whole body
	}
	redirects := s.Redirects
	if redirects == 0 {
		redirects = vegeta.NoFollow
	}
	timeout := s.Timeout
	if timeout == 0 {
		timeout = vegeta.DefaultTimeout
	}
	client := &http.Client{Transport: obs, Timeout: timeout}
	opts := []func(*vegeta.Attacker){
		vegeta.Client(client), vegeta.MaxBody(keep), vegeta.Redirects(redirects),
	}
	var pacer vegeta.Pacer = vegeta.ConstantPacer{Freq: s.Rate, Per: time.Second}
	duration := s.Duration
	if s.Rate == 0 {
		pacer, duration = backToBack(s.Hits), 0
		opts = append(opts, vegeta.Workers(1), vegeta.MaxWorkers(1))
	} else {
		if s.Workers > 0 {
			opts = append(opts, vegeta.Workers(s.Workers))
		}
		if s.MaxWorkers > 0 {
			opts = append(opts, vegeta.MaxWorkers(s.MaxWorkers))
		}
	}
	atk := vegeta.NewAttacker(opts...)
	rep := newReport(s)
	kind := s.Name // of the result being added: the plot's labeler runs inside Add
	p := plot.New(plot.Title(s.Name), plot.Label(func(r *vegeta.Result) string {
		if r.Error != "" {
			return "error"
		}
		return kind
	}))
	cpu0 := selfCPU()
	stop := context.AfterFunc(ctx, func() { atk.Stop() })
	defer stop()
	for r := range atk.Attack(s.Target, pacer, duration, s.Name) {
		b := obs.take(strconv.FormatUint(r.Seq, 10))
		kind = cmp.Or(b.Kind, s.Name)
		r.BytesIn = uint64(b.N) // vegeta counts only the kept part
		class := judge(s, r, b)
		rep.add(r, class, kind)
		p.Add(r) //nolint:errcheck // only fails on out-of-order points, which vegeta never sends
		if s.OnResult != nil {
			s.OnResult(r, b, class)
		}
		r.Body = nil
	}
	rep.CPU = selfCPU() - cpu0
	p.Close()
	rep.close(p)
	return rep
}

// transport is a loopback transport with enough idle connections for
// every worker.
func transport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	t.MaxIdleConns, t.MaxIdleConnsPerHost = 0, 10000
	t.DisableCompression = true
	return t
}

// backToBack paces n requests with no wait between them.
type backToBack int

func (n backToBack) Pace(_ time.Duration, hits uint64) (time.Duration, bool) {
	return 0, hits >= uint64(n)
}

func (backToBack) Rate(time.Duration) float64 { return 0 }

// judge is r's error class: "" when it is right.
func judge(s Scenario, r *vegeta.Result, b *Body) string {
	if r.Code == 0 {
		return "transport: " + shortErr(r.Error)
	}
	if s.Check != nil {
		return s.Check(r, b)
	}
	if r.Code < 200 || r.Code > 299 {
		return fmt.Sprintf("http %d", r.Code)
	}
	return ""
}

// shortErr drops the request line Go puts before a transport error.
func shortErr(e string) string {
	if i := strings.LastIndex(e, ": "); i >= 0 && !strings.HasSuffix(e, ": EOF") {
		return e[i+2:]
	}
	if strings.HasSuffix(e, "EOF") {
		return "connection closed (EOF)"
	}
	return e
}

// selfCPU is this process's user + system CPU time: the load generator's.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
