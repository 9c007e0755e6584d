package load

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Params parameterise a named scenario; a zero field takes the scenario's
// default (see Defaults).
type Params struct {
	Base    string // server base URL, e.g. http://127.0.0.1:8080
	MCPPath string // default /mcp
	APIKey  string

	Key       string // blob read, streamed, linked or fetched
	Size      int64  // its bytes (uploads: the bytes of each upload)
	RangeSize int64  // download-range: bytes per Range
	ReadPct   int    // mixed: percent of resources/read (the rest tools/list)
	Blobs     []Blob // integrity: the seeded blobs
	PerBlob   int    // integrity: reads of each blob

	Rate                int
	Duration            time.Duration
	Workers, MaxWorkers uint64
	P99                 time.Duration
}

// Blob is a seeded blob with its sha256.
type Blob struct {
	Key    string
	Size   int64
	SHA256 string
}

// Defaults are each scenario's parameters when none are given: the rates,
// concurrency and p99 bounds measured for them (loadtest/README.md).
var Defaults = map[string]Params{
	"small-reads":      {Key: "bench-4KiB", Size: 4 << 10, Rate: 200, Duration: 10 * time.Second, Workers: 20, MaxWorkers: 100, P99: 20 * time.Millisecond},
	"tools-list":       {Rate: 200, Duration: 10 * time.Second, Workers: 20, MaxWorkers: 100, P99: 20 * time.Millisecond},
	"mixed":            {Key: "bench-4KiB", Size: 4 << 10, ReadPct: 50, Rate: 300, Duration: 10 * time.Second, Workers: 30, MaxWorkers: 200, P99: 20 * time.Millisecond},
	"large-reads":      {Key: "bench-64MiB", Size: 64 << 20, Rate: 2, Duration: 10 * time.Second, Workers: 4, MaxWorkers: 8, P99: 1500 * time.Millisecond},
	"stream":           {Key: "bench-64MiB", Size: 64 << 20, Rate: 2, Duration: 10 * time.Second, Workers: 4, MaxWorkers: 8, P99: 1500 * time.Millisecond},
	"download-range":   {Key: "bench-64MiB", Size: 64 << 20, RangeSize: 1 << 20, Rate: 50, Duration: 10 * time.Second, Workers: 10, MaxWorkers: 50, P99: 50 * time.Millisecond},
	"upload-datauri":   {Size: 256 << 10, Rate: 10, Duration: 10 * time.Second, Workers: 5, MaxWorkers: 20, P99: 100 * time.Millisecond},
	"upload-multipart": {Size: 1 << 20, Rate: 10, Duration: 10 * time.Second, Workers: 5, MaxWorkers: 20, P99: 100 * time.Millisecond},
	"integrity":        {PerBlob: 3},
	"static-get":       {Key: "bench-4KiB", Size: 4 << 10, Rate: 300, Duration: 10 * time.Second, Workers: 30, MaxWorkers: 200, P99: 20 * time.Millisecond},
}

var builders = map[string]func(context.Context, Params) (Scenario, error){
	"small-reads": smallReads, "tools-list": toolsList, "mixed": mixed, "large-reads": largeReads,
	"stream": stream, "download-range": downloadRange, "upload-datauri": uploadDataURI,
	"upload-multipart": uploadMultipart, "integrity": integrity, "static-get": staticGet,
}

// New builds the scenario called name with p over its defaults; building
// may open an MCP session or mint links and upload endpoints.
func New(ctx context.Context, name string, p Params) (Scenario, error) {
	build, ok := builders[name]
	if !ok {
		return Scenario{}, fmt.Errorf("unknown scenario %q", name)
	}
	p = withDefaults(p, Defaults[name])
	s, err := build(ctx, p)
	if err != nil {
		return Scenario{}, fmt.Errorf("%s: %w", name, err)
	}
	s.Name = name
	s.Rate, s.Duration, s.P99 = p.Rate, p.Duration, p.P99
	s.Workers, s.MaxWorkers = p.Workers, p.MaxWorkers
	return s, nil
}

func withDefaults(p, d Params) Params {
	or := func(v *int64, dv int64) {
		if *v == 0 {
			*v = dv
		}
	}
	if p.Key == "" {
		p.Key = d.Key
	}
	if p.MCPPath == "" {
		p.MCPPath = "/mcp"
	}
	or(&p.Size, d.Size)
	or(&p.RangeSize, d.RangeSize)
	p.ReadPct = int(pick(int64(p.ReadPct), int64(d.ReadPct)))
	p.PerBlob = int(pick(int64(p.PerBlob), int64(d.PerBlob)))
	p.Rate = int(pick(int64(p.Rate), int64(d.Rate)))
	p.Duration = time.Duration(pick(int64(p.Duration), int64(d.Duration)))
	p.P99 = time.Duration(pick(int64(p.P99), int64(d.P99)))
	p.Workers = uint64(pick(int64(p.Workers), int64(d.Workers)))
	p.MaxWorkers = uint64(pick(int64(p.MaxWorkers), int64(d.MaxWorkers)))
	return p
}

func pick(v, dflt int64) int64 {
	if v == 0 {
		return dflt
	}
	return v
}

func (p Params) open(ctx context.Context, caps map[string]any) (*Session, error) {
	return Open(ctx, p.Base+p.MCPPath, p.APIKey, caps)
}

func smallReads(ctx context.Context, p Params) (Scenario, error) {
	s, err := p.open(ctx, nil)
	if err != nil {
		return Scenario{}, err
	}
	return Scenario{
		Target: s.Call(func(uint64) (string, any) { return "resources/read", Read(p.Key) }),
		Check:  ReadClass(p.Size),
	}, nil
}

func toolsList(ctx context.Context, p Params) (Scenario, error) {
	s, err := p.open(ctx, nil)
	if err != nil {
		return Scenario{}, err
	}
	return Scenario{
		Target: s.Call(func(uint64) (string, any) { return "tools/list", nil }),
		Check:  RPCClass,
	}, nil
}

// mixed spreads ReadPct reads evenly over every 100 requests (37 is prime
// to 100), so short runs hold the stated mix.
func mixed(ctx context.Context, p Params) (Scenario, error) {
	s, err := p.open(ctx, nil)
	if err != nil {
		return Scenario{}, err
	}
	isRead := func(seq uint64) bool { return int(seq*37%100) < p.ReadPct }
	read := ReadClass(p.Size)
	return Scenario{
		Target: s.Call(func(seq uint64) (string, any) {
			if isRead(seq) {
				return "resources/read", Read(p.Key)
			}
			return "tools/list", nil
		}),
		Check: func(r *vegeta.Result, b *Body) string {
			if b.Kind == "resources/read" {
				return read(r, b)
			}
			return RPCClass(r, b)
		},
	}, nil
}

func largeReads(ctx context.Context, p Params) (Scenario, error) {
	s, err := smallReads(ctx, p)
	s.KeepBody, s.Timeout = 4<<10, 120*time.Second
	return s, err
}

func staticGet(_ context.Context, p Params) (Scenario, error) {
	url := strings.TrimSuffix(p.Base, "/") + "/" + p.Key
	return Scenario{
		Target:   func(t *vegeta.Target) error { t.Method, t.URL = http.MethodGet, url; return nil },
		Check:    exactLength(http.StatusOK, p.Size),
		KeepBody: -1,
	}, nil
}

// exactLength checks the status and that the body, and Content-Length
// when given, are size bytes.
func exactLength(status int, size int64) func(*vegeta.Result, *Body) string {
	return func(r *vegeta.Result, b *Body) string {
		if int(r.Code) != status {
			return fmt.Sprintf("http %d (want %d)", r.Code, status)
		}
		if cl := r.Headers.Get("Content-Length"); cl != "" && cl != fmt.Sprint(size) {
			return "Content-Length is not the asked length"
		}
		if b.N != size {
			return "body is not the asked length"
		}
		return ""
	}
}
