package mcp

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/mcpblob/mcpblob/core/budget"
	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
)

// Limits bound the protocol state clients can make one node hold, per
// principal and per node (docs/security.md, "Protocol state"). The zero
// value of a field is its default; a negative value is no bound.
type Limits struct {
	// SessionsPerPrincipal and Sessions bound the 2025-11-25 sessions a
	// node holds for one principal and in all. Defaults 1,024 and 16,384.
	SessionsPerPrincipal, Sessions int64
	// CapabilityBytes bounds the bytes of client capabilities a session
	// keeps. Default 2 KiB.
	CapabilityBytes int64
	// SubscriptionsPerPrincipal and Subscriptions bound resource
	// subscriptions (resources/subscribe and subscriptions/listen alike),
	// SubscriptionBytesPerPrincipal and SubscriptionBytes their URIs'
	// bytes. Defaults 8,192 and 262,144; 4 MiB and 64 MiB.
	SubscriptionsPerPrincipal, Subscriptions         int64
	SubscriptionBytesPerPrincipal, SubscriptionBytes int64
	// StreamsPerPrincipal and Streams bound open notification streams:
	// standalone GET streams and subscriptions/listen. Defaults 128 and
	// 2,048.
	StreamsPerPrincipal, Streams int64
	// PendingPerPrincipal and Pending bound waits for the client:
	// server-to-client requests waiting for its answer (elicitation,
	// sampling, roots), a task's input round waiting for tasks/update, an
	// accepted URL-mode upload ([Call.HoldPending]). 2026-07-28 multi
	// round-trip rounds hold nothing between rounds (their state travels
	// in the signed requestState) and are not counted. Defaults 64 and
	// 1,024.
	PendingPerPrincipal, Pending int64
	// ClaimsPerMinute bounds the one-time facts (claims) one principal
	// can make this node write to the shared store a minute: ended or
	// begun session records, redeemed single-use links, taken upload ids.
	// Default 600.
	ClaimsPerMinute int64
}

// Defaults of [Limits].
const (
	DefaultSessionsPerPrincipal          = 1024
	DefaultSessions                      = 16384
	DefaultCapabilityBytes               = 2 << 10
	DefaultSubscriptionsPerPrincipal     = 8192
	DefaultSubscriptions                 = 262144
	DefaultSubscriptionBytesPerPrincipal = 4 << 20
	DefaultSubscriptionBytes             = 64 << 20
	DefaultStreamsPerPrincipal           = 128
	DefaultStreams                       = 2048
	DefaultPendingPerPrincipal           = 64
	DefaultPending                       = 1024
	DefaultClaimsPerMinute               = 600
)

func (l Limits) withDefaults() Limits {
	orDefault := func(v *int64, def int64) {
		switch {
		case *v == 0:
			*v = def
		case *v < 0:
			*v = 0 // budget: no bound
		}
	}
	orDefault(&l.SessionsPerPrincipal, DefaultSessionsPerPrincipal)
	orDefault(&l.Sessions, DefaultSessions)
	orDefault(&l.CapabilityBytes, DefaultCapabilityBytes)
	orDefault(&l.SubscriptionsPerPrincipal, DefaultSubscriptionsPerPrincipal)
	orDefault(&l.Subscriptions, DefaultSubscriptions)
	orDefault(&l.SubscriptionBytesPerPrincipal, DefaultSubscriptionBytesPerPrincipal)
	orDefault(&l.SubscriptionBytes, DefaultSubscriptionBytes)
	orDefault(&l.StreamsPerPrincipal, DefaultStreamsPerPrincipal)
	orDefault(&l.Streams, DefaultStreams)
	orDefault(&l.PendingPerPrincipal, DefaultPendingPerPrincipal)
	orDefault(&l.Pending, DefaultPending)
	orDefault(&l.ClaimsPerMinute, DefaultClaimsPerMinute)
	return l
}

// budgets are a server's pools of protocol state and its claims rate.
type budgets struct {
	sessions          *budget.Pool
	subscriptions     *budget.Pool
	subscriptionBytes *budget.Pool
	streams           *budget.Pool
	pending           *budget.Pool
	claims            *budget.Rate
}

func (s *Server) newBudgets() budgets {
	l, log := s.opts.Limits, s.log
	return budgets{
		sessions:          budget.NewPool(budget.Limit{Name: "sessions", PerPrincipal: l.SessionsPerPrincipal, PerNode: l.Sessions}, log),
		subscriptions:     budget.NewPool(budget.Limit{Name: "subscriptions", PerPrincipal: l.SubscriptionsPerPrincipal, PerNode: l.Subscriptions}, log),
		subscriptionBytes: budget.NewPool(budget.Limit{Name: "subscription_bytes", PerPrincipal: l.SubscriptionBytesPerPrincipal, PerNode: l.SubscriptionBytes}, log),
		streams:           budget.NewPool(budget.Limit{Name: "streams", PerPrincipal: l.StreamsPerPrincipal, PerNode: l.Streams}, log),
		pending:           budget.NewPool(budget.Limit{Name: "pending", PerPrincipal: l.PendingPerPrincipal, PerNode: l.Pending}, log),
		claims:            budget.NewRate("claims_per_minute", l.ClaimsPerMinute, log),
	}
}

// Claims is the server's rate of claims per principal a minute
// ([Limits.ClaimsPerMinute]), shared with the transport that writes claims
// of its own (single-use links, upload ids).
func (s *Server) Claims() *budget.Rate { return s.budgets.claims }

// CodeLimitExceeded is the JSON-RPC error code of a request refused by a
// limit on protocol state ([Limits]); its data names the limit.
const CodeLimitExceeded = -32029

// limitRetryAfter is the Retry-After of a refusal that waits on other
// requests giving state back, not on a clock.
const limitRetryAfter = 5 * time.Second

// limitError turns a budget refusal into the protocol's answer: HTTP 429
// when the principal's own bound was met, 503 when the node's, with
// Retry-After, and data {"limit", "scope", "max"}. nil for any other error.
func limitError(err error, what string) *Error {
	var e *budget.Exceeded
	if !errors.As(err, &e) {
		return nil
	}
	status, who := http.StatusTooManyRequests, "for this principal"
	if e.Scope == budget.PerNode {
		status, who = http.StatusServiceUnavailable, "on this node"
	}
	wait := e.RetryAfter
	if wait <= 0 {
		wait = limitRetryAfter
	}
	secs := int64((wait + time.Second - 1) / time.Second)
	data := map[string]any{"limit": e.Name, "scope": string(e.Scope), "max": e.Max}
	return jsonrpc.NewError(CodeLimitExceeded, "Too Many Requests: "+what+" (at most "+strconv.FormatInt(e.Max, 10)+" "+who+")", data).
		WithStatus(status).WithHeader("Retry-After", strconv.FormatInt(secs, 10))
}
