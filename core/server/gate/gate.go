package gate

import (
	"io"
	"log/slog"
	"time"

	"github.com/mcpblob/mcpblob/core/auth"
	"github.com/mcpblob/mcpblob/core/server/pace"
	"github.com/mcpblob/mcpblob/core/server/telemetry"
	"github.com/mcpblob/mcpblob/core/tenancy"
)

// A Gate is the set of rules one server applies to its requests. The
// assembly (package server) builds one and hands it to the front and to
// the blob service; its fields do not change once serving.
type Gate struct {
	Auth    *auth.Authenticator
	Tenancy tenancy.Policy
	// Loopback: the server listens on a loopback address, so Host must be
	// a localhost name and Origin, if any, a localhost origin.
	Loopback bool
	// AllowedHosts restricts Host on other binds; AllowedOrigins adds
	// acceptable Origin values.
	AllowedHosts, AllowedOrigins []string
	// PublicURL is the base of the protected resource metadata URL in
	// challenges.
	PublicURL string
	// Uploads are the upload slots; BodyMinRate, BodyGrace and
	// ReadTimeout the rate rule of request bodies (pace.NewReader).
	Uploads     *pace.Slots
	BodyMinRate int64
	BodyGrace   time.Duration
	ReadTimeout time.Duration
	Log         *slog.Logger
}

// Defaults of [Limits].
const (
	DefaultMaxUploads             = 128
	DefaultMaxUploadsPerPrincipal = 32
	DefaultBodyMinRate            = 4 << 10 // bytes per second
	DefaultBodyGrace              = 10 * time.Second
)

// UploadThreshold: a POST /mcp body longer than this, or of unknown
// length (chunked), is an upload and needs an upload slot; shorter ones
// hold at most this much and are bounded by the rate rule alone. It is the
// length beyond which the scanner diverts a string to storage or a spool.
const UploadThreshold = 64 << 10

// Limits bound the uploads in progress and the rate of request bodies.
// The zero value of every field is the documented default.
type Limits struct {
	// MaxUploads bounds the uploads in progress: PUT /v1/blobs/{key},
	// POST|PUT /u/{token}, and POST /mcp bodies over 64 KiB or of unknown
	// length. One more is answered 503 with Retry-After. Default 128.
	MaxUploads int
	// MaxUploadsPerPrincipal bounds the uploads in progress of one
	// principal (API key, OAuth subject, or the principal an upload link
	// was minted for); one more is answered 429 with Retry-After. Default 32.
	MaxUploadsPerPrincipal int
	// BodyMinRate is the average rate, in bytes per second, below which a
	// request body is cut off (408): after BodyGrace of slow start, each
	// byte buys 1/BodyMinRate second of waiting, banked up to the front's
	// ReadTimeout. Default 4096 (4 KiB/s); negative: no rate rule, only
	// ReadTimeout per read.
	BodyMinRate int64
	// BodyGrace is the waiting a body gets before its bytes have to pay for
	// it (the slow start of the rate rule). Default 10s.
	BodyGrace time.Duration
}

// Defaults fills in the defaults of l.
func (l *Limits) Defaults() {
	if l.MaxUploads <= 0 {
		l.MaxUploads = DefaultMaxUploads
	}
	if l.MaxUploadsPerPrincipal <= 0 {
		l.MaxUploadsPerPrincipal = DefaultMaxUploadsPerPrincipal
	}
	if l.BodyMinRate == 0 {
		l.BodyMinRate = DefaultBodyMinRate
	}
	if l.BodyGrace <= 0 {
		l.BodyGrace = DefaultBodyGrace
	}
}

// A Caller is who an admitted /mcp request comes from, with what core/mcp
// needs to know of its credential.
type Caller struct {
	auth.Identity
	// Audience is the audience of its notifications (package tenancy).
	Audience string
	// StillValid checks, for what outlives the request (a notification
	// stream), that its credential is still accepted; nil when only
	// Identity.Expires ends it.
	StillValid func() bool
}

// An Admission is an /mcp request the gate let in (AdmitMCP, admit.go):
// its caller, its telemetry Record, its body and the upload slot it holds
// until Close (refuse.go, beside the settling of the body it mostly is).
type Admission struct {
	Caller
	// Record is the request's telemetry Record: the caller is set on it,
	// the streamed body's bytes are counted into it.
	Record *telemetry.Record
	// Body is the request body, nil when there is none: the bytes fasthttp
	// already holds, or the stream read under the rate rule.
	Body    io.Reader
	paced   *pace.Reader // Body when it streams
	release func()       // the upload slot's; nil without one
}
