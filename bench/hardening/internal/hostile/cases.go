package hostile

import (
	"context"
	"sync/atomic"

	"github.com/mcpblob/mcpblob/bench/hardening/internal/wire"
)

// want is what an input must get, beyond "no 5xx and no unclear error".
type want int

const (
	wantEither want = iota // a clear rejection or a success: both are right
	WantReject             // success would be a security or contract failure
	WantAccept             // a valid (if odd) input the docs say must work
)

// surface is one row of the table: a public surface and its error shape.
type surface struct {
	Name  string
	Shape wire.Shape
}

var (
	Legacy = surface{"/mcp 2025-11-25", wire.ShapeRPC}
	Modern = surface{"/mcp 2026-07-28", wire.ShapeRPC}
	Stream = surface{"resources/stream", wire.ShapeRPC}
	V1     = surface{"/v1", wire.ShapeAPI}
	D      = surface{"/d", wire.ShapeAPI}
	U      = surface{"/u", wire.ShapeAPI}
	Page   = surface{"/upload", wire.ShapePage}
)

// Surfaces is the order of the table's rows.
var Surfaces = []surface{Legacy, Modern, Stream, V1, D, U, Page}

// Case is one hostile input and what it must get.
type Case struct {
	Name       string // the input, short, for the failure list
	Want       want
	WellFormed bool   // the body is well-formed JSON: -32700 would be wrong
	As         string // principal a success stores objects for ("" = alice)
	Stores     bool   // a success stores the objects its answer names
	Send       func(ctx context.Context, e *Env) *wire.Answer
	// check, when set, returns what is wrong with an answer ("" = fine):
	// expectations beyond the verdict (a status, a header, a follow-up).
	Check func(ctx context.Context, e *Env, a *wire.Answer) string
}

// Batch is the inputs of one class on one surface; the store, the process
// and the logs are checked after each.
type Batch struct {
	Class   string
	Surface surface
	Cases   []Case
}

// class generates its batches; it may mint tokens or store objects first.
type class struct {
	name string
	Gen  func(ctx context.Context, e *Env) []Batch
}

// Classes is every class, in the order they run.
var Classes = []class{
	{"path tricks", pathTricks},
	{"over-long values", overLong},
	{"data URIs", dataURIs},
	{"JSON and JSON-RPC", jsonAbuse},
	{"HTTP framing and headers", headerAbuse},
	{"Range headers", rangeAbuse},
	{"token forgery", tokenAbuse},
	{"wrong principal", principalAbuse},
	{"multipart", multipartAbuse},
	{"era header rules", eraAbuse},
	{"active content", activeContent},
}

// seq numbers generated keys so no two inputs write the same object.
var seq atomic.Int64

func next() int64 { return seq.Add(1) }

// Baseline objects: stored before any hostile input and read back after
// every batch. Range inputs use baseText (1,000 bytes).
const (
	BaseText = "hard/base/text.txt"
	BaseBin  = "hard/base/blob.bin"
	BaseSize = 1000
)
