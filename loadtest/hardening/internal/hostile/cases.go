package hostile

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/wire"
)

// Want is what an input must get, beyond "no 5xx and no unclear error".
type Want int

const (
	WantEither Want = iota // a clear rejection or a success: both are right
	WantReject             // success would be a security or contract failure
	WantAccept             // a valid (if odd) input the docs say must work
)

// Surface is one row of the table: a public surface and its error shape.
type Surface struct {
	Name  string
	Shape wire.Shape
}

var (
	Legacy = Surface{"/mcp 2025-11-25", wire.ShapeRPC}
	Modern = Surface{"/mcp 2026-07-28", wire.ShapeRPC}
	Stream = Surface{"resources/stream", wire.ShapeRPC}
	V1     = Surface{"/v1", wire.ShapeAPI}
	D      = Surface{"/d", wire.ShapeAPI}
	U      = Surface{"/u", wire.ShapeAPI}
	Page   = Surface{"/upload", wire.ShapePage}
	Tus    = Surface{"/v1/tus", wire.ShapeAPI} // resumable uploads (package hostiletus)
	Files  = Surface{"files/*", wire.ShapeRPC} // SEP-2631 file objects (package hostilefiles)
)

// Surfaces is the order of the table's rows.
var Surfaces = []Surface{Legacy, Modern, Stream, Files, V1, Tus, D, U, Page, Smuggle}

// Case is one hostile input and what it must get.
type Case struct {
	Name       string // the input, short, for the failure list
	Want       Want
	WellFormed bool   // the body is well-formed JSON: -32700 would be wrong
	As         string // principal a success stores objects for ("" = alice)
	Stores     bool   // a success stores the objects its answer names
	Send       func(ctx context.Context, e *Env) *wire.Answer
	// Check, when set, returns what is wrong with an answer ("" = fine):
	// expectations beyond the verdict (a status, a header, a follow-up).
	Check func(ctx context.Context, e *Env, a *wire.Answer) string
	// CheckAlways runs Check on every answer, whatever its verdict (the
	// status is part of what Check looks at).
	CheckAlways bool
}

// Batch is the inputs of one class on one surface; the store, the process
// and the logs are checked after each.
type Batch struct {
	Class   string
	Surface Surface
	Cases   []Case
}

// Class generates its batches; it may mint tokens or store objects first.
type Class struct {
	Name string
	Gen  func(ctx context.Context, e *Env) []Batch
}

// Classes is every class, in the order they run.
var Classes = []Class{
	{"path tricks", pathTricks},
	{"over-long values", overLong},
	{"data URIs", dataURIs},
	{"JSON and JSON-RPC", jsonAbuse},
	{"HTTP framing and headers", headerAbuse},
	{"HTTP smuggling", smugglingAbuse},
	{"Range headers", rangeAbuse},
	{"token forgery", tokenAbuse},
	{"wrong principal", principalAbuse},
	{"multipart", multipartAbuse},
	{"era header rules", eraAbuse},
	{"active content", activeContent},
	{ExpiryName, expiryAbuse},
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
	// BaseAlice is a baseline object only alice stores: with tenancy
	// (where every principal gets the baseline) bob has no key of that name.
	BaseAlice = "hard/base/alice.txt"
)

// setupFailed is the batch of a class that could not prepare its inputs
// (the server refused to mint what they forge): one input that reports it,
// so the class shows as a finding instead of silently sending nothing.
func setupFailed(class string, s Surface, what string) []Batch {
	return []Batch{{class, s, []Case{{Name: "(setup) " + what, Send: func(context.Context, *Env) *wire.Answer {
		return &wire.Answer{Err: errors.New("the class could not start: " + what + " failed")}
	}}}}}
}
