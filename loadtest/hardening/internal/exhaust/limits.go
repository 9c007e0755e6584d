package exhaust

import (
	"fmt"

	"github.com/mcpblob/mcpblob/core/mcp/limits"
)

// Limits are the node's limits on protocol state: core/mcp/limits' Limits
// (the serve flags of cmd/mcpblob/protocol_limits.go), with the harness's
// methods.
type Limits limits.Limits

// Defaults are core/mcp/limits' defaults: what a node runs with when no flag
// says otherwise.
var Defaults = Limits{
	SessionsPerPrincipal: limits.DefaultSessionsPerPrincipal, Sessions: limits.DefaultSessions,
	CapabilityBytes:           limits.DefaultCapabilityBytes,
	SubscriptionsPerPrincipal: limits.DefaultSubscriptionsPerPrincipal, Subscriptions: limits.DefaultSubscriptions,
	SubscriptionBytesPerPrincipal: limits.DefaultSubscriptionBytesPerPrincipal, SubscriptionBytes: limits.DefaultSubscriptionBytes,
	StreamsPerPrincipal: limits.DefaultStreamsPerPrincipal, Streams: limits.DefaultStreams,
	PendingPerPrincipal: limits.DefaultPendingPerPrincipal, Pending: limits.DefaultPending,
	ClaimsPerMinute: limits.DefaultClaimsPerMinute,
}

// Scaled are the smoke run's limits: small enough that ten times each is
// driven in seconds; each node bound is four times the principal's, so
// the one principal meets its own bound first and a second principal is
// still served.
var Scaled = Limits{
	SessionsPerPrincipal: 32, Sessions: 128,
	CapabilityBytes:           limits.DefaultCapabilityBytes,
	SubscriptionsPerPrincipal: 64, Subscriptions: 256,
	SubscriptionBytesPerPrincipal: 256 << 10, SubscriptionBytes: 1 << 20,
	StreamsPerPrincipal: 8, Streams: 32,
	PendingPerPrincipal: 4, Pending: 16,
	ClaimsPerMinute: 20,
}

// Flags are the serve flags that set l.
func (l Limits) Flags() []string {
	var out []string
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"max-sessions-per-principal", l.SessionsPerPrincipal}, {"max-sessions", l.Sessions},
		{"max-capability-bytes", l.CapabilityBytes},
		{"max-subscriptions-per-principal", l.SubscriptionsPerPrincipal}, {"max-subscriptions", l.Subscriptions},
		{"max-subscription-bytes-per-principal", l.SubscriptionBytesPerPrincipal}, {"max-subscription-bytes", l.SubscriptionBytes},
		{"max-streams-per-principal", l.StreamsPerPrincipal}, {"max-streams", l.Streams},
		{"max-pending-per-principal", l.PendingPerPrincipal}, {"max-pending", l.Pending},
		{"max-claims-per-minute", l.ClaimsPerMinute},
	} {
		out = append(out, "--"+f.name, fmt.Sprint(f.v))
	}
	return out
}

// String lists the per-principal limits.
func (l Limits) String() string {
	return fmt.Sprintf("per principal: %d sessions, %d B of capabilities, %d subscriptions and %d B of their URIs, %d streams, %d pending, %d claims a minute",
		l.SessionsPerPrincipal, l.CapabilityBytes, l.SubscriptionsPerPrincipal, l.SubscriptionBytesPerPrincipal,
		l.StreamsPerPrincipal, l.PendingPerPrincipal, l.ClaimsPerMinute)
}
