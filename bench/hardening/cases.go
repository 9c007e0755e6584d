package main

import (
	"context"
	"sync/atomic"
)

// want is what an input must get, beyond "no 5xx and no unclear error".
type want int

const (
	wantEither want = iota // a clear rejection or a success: both are right
	wantReject             // success would be a security or contract failure
	wantAccept             // a valid (if odd) input the docs say must work
)

// surface is one row of the table: a public surface and its error shape.
type surface struct {
	name  string
	shape shape
}

var (
	sLegacy = surface{"/mcp 2025-11-25", shapeRPC}
	sModern = surface{"/mcp 2026-07-28", shapeRPC}
	sStream = surface{"resources/stream", shapeRPC}
	sV1     = surface{"/v1", shapeAPI}
	sD      = surface{"/d", shapeAPI}
	sU      = surface{"/u", shapeAPI}
	sPage   = surface{"/upload", shapePage}
)

// surfaces is the order of the table's rows.
var surfaces = []surface{sLegacy, sModern, sStream, sV1, sD, sU, sPage}

// hcase is one hostile input and what it must get.
type hcase struct {
	name       string // the input, short, for the failure list
	want       want
	wellFormed bool   // the body is well-formed JSON: -32700 would be wrong
	as         string // principal a success stores objects for ("" = alice)
	stores     bool   // a success stores the objects its answer names
	send       func(ctx context.Context, e *env) *answer
	// check, when set, returns what is wrong with an answer ("" = fine):
	// expectations beyond the verdict (a status, a header, a follow-up).
	check func(ctx context.Context, e *env, a *answer) string
}

// batch is the inputs of one class on one surface; the store, the process
// and the logs are checked after each.
type batch struct {
	class   string
	surface surface
	cases   []hcase
}

// class generates its batches; it may mint tokens or store objects first.
type class struct {
	name string
	gen  func(ctx context.Context, e *env) []batch
}

// classes is every class, in the order they run.
var classes = []class{
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
