package metrics

import (
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	vm "github.com/VictoriaMetrics/metrics"
)

// Planes of mcpblob_bytes_sent_total and mcpblob_bytes_received_total.
const (
	PlaneMCPRead  = "mcp-read" // MCP JSON answers, resources/read above all
	PlaneStream   = "stream"   // resources/stream raw bytes
	PlaneDownload = "download" // /d links and GET /v1/blobs/{key}
	PlaneUpload   = "upload"   // /u, /upload, PUT /v1/blobs/{key}, MCP file inputs
	PlaneControl  = "control"  // the rest of /v1 and of /mcp
)

// Kinds of mcpblob_active_streams.
const (
	StreamSSE      = "sse"      // SSE answers and 2025-11-25 GET streams
	StreamListen   = "listen"   // 2026-07-28 subscriptions/listen
	StreamDownload = "download" // byte bodies in flight (/d, /v1, resources/stream)
	StreamUpload   = "upload"   // upload bodies being stored
)

// Build describes the binary for mcpblob_build_info.
type Build struct {
	Version, Go                        string
	CodecEncode, CodecDecode, JSONScan string
}

// Set is one server's metrics. Safe for concurrent use.
type Set struct {
	set      *vm.Set
	http     sync.Map // httpKey → *httpSeries
	mcp      sync.Map // mcpKey → *vm.Counter
	uploads  sync.Map // [2]string → *vm.Counter
	storage  sync.Map // storageKey → *vm.Counter
	storageD sync.Map // [2]string → *vm.PrometheusHistogram
	limits   sync.Map // [2]string → *vm.Counter
	upstream sync.Map // string → *vm.Counter (gateway.go)
	relayed  sync.Map // string → *vm.Counter (gateway.go)
	gwcache  sync.Map // string → *vm.Counter (gateway_cache.go)
	gateway  gatewaySeries
	sent     map[string]*vm.Counter
	received map[string]*vm.Counter
	active   map[string]*activeGauge
}

type httpKey struct {
	route, method string
	code          int
}

type httpSeries struct {
	count    *vm.Counter
	duration *vm.PrometheusHistogram
}

type mcpKey struct{ method, era, outcome string }

type storageKey struct{ backend, op, outcome string }

// New returns a Set with the families that exist from the start: bytes by
// plane and active streams at zero, and the build info.
func New(b Build) *Set {
	s := &Set{set: vm.NewSet(), sent: map[string]*vm.Counter{}, received: map[string]*vm.Counter{},
		active: map[string]*activeGauge{}}
	for _, p := range []string{PlaneMCPRead, PlaneStream, PlaneDownload, PlaneUpload, PlaneControl} {
		s.sent[p] = s.set.NewCounter(`mcpblob_bytes_sent_total{plane="` + p + `"}`)
		s.received[p] = s.set.NewCounter(`mcpblob_bytes_received_total{plane="` + p + `"}`)
	}
	for _, k := range []string{StreamSSE, StreamListen, StreamDownload, StreamUpload} {
		g := &activeGauge{}
		s.active[k] = g
		s.set.NewGauge(`mcpblob_active_streams{kind="`+k+`"}`, g.value)
	}
	s.set.NewGauge(fmt.Sprintf(`mcpblob_build_info{version=%s,go=%s,codec_encode=%s,codec_decode=%s,json_scan=%s}`,
		quote(b.Version), quote(b.Go), quote(b.CodecEncode), quote(b.CodecDecode), quote(b.JSONScan)),
		func() float64 { return 1 })
	return s
}

// quote is a label value in the exposition format's quoting.
func quote(v string) string { return strconv.Quote(v) }

// Gauge registers a gauge read at every scrape: name is a whole series
// name such as "mcpblob_sessions_active".
func (s *Set) Gauge(name string, f func() float64) { s.set.GetOrCreateGauge(name, f) }

// Request counts one HTTP request of route answered with code after d.
func (s *Set) Request(route, method string, code int, d time.Duration) {
	k := httpKey{route, HTTPMethod(method), code}
	hs := series(&s.http, k, func() *httpSeries {
		return &httpSeries{
			count: s.set.GetOrCreateCounter(fmt.Sprintf(`mcpblob_http_requests_total{route=%s,method=%s,code="%d"}`,
				quote(k.route), quote(k.method), code)),
			duration: s.set.GetOrCreatePrometheusHistogramExt(`mcpblob_http_request_duration_seconds{route=`+quote(route)+`}`,
				durationBuckets),
		}
	})
	hs.count.Inc()
	hs.duration.Update(d.Seconds())
}

// durationBuckets suit requests from tens of microseconds (a small read) to
// minutes (a large upload).
var durationBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300}

// HTTPMethod bounds a request method to the standard ones and OTHER.
func HTTPMethod(m string) string {
	switch m {
	case "GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH":
		return m
	}
	return "OTHER"
}

// MCP counts one JSON-RPC request; method must already be bounded (a
// method the server offers, or "other").
func (s *Set) MCP(method, era, outcome string) {
	counter(s, &s.mcp, mcpKey{method, era, outcome}, func() string {
		return fmt.Sprintf(`mcpblob_mcp_requests_total{method=%s,era=%s,outcome=%s}`, quote(method), quote(era), quote(outcome))
	}).Inc()
}

// LimitRefused counts one request refused by a limit on protocol state
// (core/mcp/limits; the claims rate): limit and scope are the limit's name
// and "principal" or "node", a bounded set. No principal label: one series
// per client would have no bound.
func (s *Set) LimitRefused(limit, scope string) {
	counter(s, &s.limits, [2]string{limit, scope}, func() string {
		return fmt.Sprintf(`mcpblob_limit_refusals_total{limit=%s,scope=%s}`, quote(limit), quote(scope))
	}).Inc()
}

// StateHeld adds the gauge mcpblob_protocol_state{kind} read from f at
// every scrape: how much of one kind of protocol state the node holds in
// all (sessions, subscriptions, subscription bytes, streams, pending).
func (s *Set) StateHeld(kind string, f func() float64) {
	s.set.GetOrCreateGauge(`mcpblob_protocol_state{kind=`+quote(kind)+`}`, f)
}

// counter is m's counter for key, registered as the series name() on its
// first use.
func counter[K comparable](s *Set, m *sync.Map, key K, name func() string) *vm.Counter {
	return series(m, key, func() *vm.Counter { return s.set.GetOrCreateCounter(name()) })
}

// series is m's series for key, made by create on its first use.
// (Generic, so key becomes an interface, and escapes, only on that first
// use.)
func series[K comparable, V any](m *sync.Map, key K, create func() V) V {
	if v, ok := m.Load(key); ok {
		return v.(V)
	}
	v, _ := m.LoadOrStore(key, create())
	return v.(V)
}

// Sent adds n bytes sent on plane (an unknown plane counts as control).
func (s *Set) Sent(plane string, n int64) { add(s.sent, plane, n) }

// Received adds n bytes received on plane.
func (s *Set) Received(plane string, n int64) { add(s.received, plane, n) }

func add(m map[string]*vm.Counter, plane string, n int64) {
	if n <= 0 {
		return
	}
	c := m[plane]
	if c == nil {
		c = m[PlaneControl]
	}
	c.AddInt64(n)
}

// Upload counts one finished upload on surface ("mcp", "upload-endpoint",
// "control") with outcome ("ok", "rejected", "error").
func (s *Set) Upload(surface, outcome string) {
	counter(s, &s.uploads, [2]string{surface, outcome}, func() string {
		return fmt.Sprintf(`mcpblob_uploads_total{surface=%s,outcome=%s}`, quote(surface), quote(outcome))
	}).Inc()
}

// Storage counts one storage operation of backend that took d and ended
// with outcome (ok, not_found, exists, error, aborted).
func (s *Set) Storage(backend, op, outcome string, d time.Duration) {
	counter(s, &s.storage, storageKey{backend, op, outcome}, func() string {
		return fmt.Sprintf(`mcpblob_storage_operations_total{backend=%s,op=%s,outcome=%s}`, quote(backend), quote(op), quote(outcome))
	}).Inc()
	series(&s.storageD, [2]string{backend, op}, func() *vm.PrometheusHistogram {
		return s.set.GetOrCreatePrometheusHistogramExt(fmt.Sprintf(
			`mcpblob_storage_operation_duration_seconds{backend=%s,op=%s}`, quote(backend), quote(op)), durationBuckets)
	}).Update(d.Seconds())
}

// Open marks a stream of kind as started; the returned func marks it
// ended and may be called more than once.
func (s *Set) Open(kind string) (done func()) {
	g := s.active[kind]
	if g == nil {
		return func() {}
	}
	g.add(1)
	var once sync.Once
	return func() { once.Do(func() { g.add(-1) }) }
}

// WritePrometheus writes every family, then the Go runtime and process
// collectors, in the Prometheus text format.
func (s *Set) WritePrometheus(w io.Writer) {
	s.set.WritePrometheus(w)
	vm.WriteProcessMetrics(w)
}

func init() { vm.ExposeMetadata(true) }

// activeGauge counts streams in progress: those Open counts plus what
// a source reports.
type activeGauge struct {
	n   atomic.Int64
	src atomic.Pointer[func() float64]
}

func (g *activeGauge) add(d int64) { g.n.Add(d) }

func (g *activeGauge) value() float64 {
	v := float64(g.n.Load())
	if f := g.src.Load(); f != nil {
		v += (*f)()
	}
	return v
}

// StreamSource adds f's count, read at every scrape, to the streams of
// kind in progress (for streams counted where they live, such as SSE
// streams in core/mcp).
func (s *Set) StreamSource(kind string, f func() float64) {
	if g := s.active[kind]; g != nil {
		g.src.Store(&f)
	}
}
