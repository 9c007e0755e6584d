package limits

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
	// accepted URL-mode upload (mcp's Call.HoldPending). 2026-07-28 multi
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

// WithDefaults returns l with each zero field set to its default and each
// negative one to 0, core/budget's "no bound".
func (l Limits) WithDefaults() Limits {
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
