package main

import (
	"flag"

	"github.com/mcpblob/mcpblob/core/mcp/limits"
)

// protocolLimitFlags defines the flags of the protocol-state limits
// (limits.Limits) on fs, each defaulting to core/mcp/limits' default. 0 on the
// command line is no bound; [noBoundAtZero] maps it to limits' "negative".
func protocolLimitFlags(fs *flag.FlagSet, l *limits.Limits) {
	for _, f := range []struct {
		v     *int64
		name  string
		def   int64
		usage string
	}{
		{&l.SessionsPerPrincipal, "max-sessions-per-principal", limits.DefaultSessionsPerPrincipal, "2025-11-25 sessions a node holds for one principal; one more ends the principal's least recently used idle session, or is refused (429) when none is idle"},
		{&l.Sessions, "max-sessions", limits.DefaultSessions, "2025-11-25 sessions a node holds; one more ends the least recently used idle session, or is refused (503)"},
		{&l.CapabilityBytes, "max-capability-bytes", limits.DefaultCapabilityBytes, "bytes of an initialize's client capabilities a session keeps (members the server reads); a larger kept set is refused (-32602)"},
		{&l.SubscriptionsPerPrincipal, "max-subscriptions-per-principal", limits.DefaultSubscriptionsPerPrincipal, "resource subscriptions of one principal (resources/subscribe and subscriptions/listen)"},
		{&l.Subscriptions, "max-subscriptions", limits.DefaultSubscriptions, "resource subscriptions a node holds"},
		{&l.SubscriptionBytesPerPrincipal, "max-subscription-bytes-per-principal", limits.DefaultSubscriptionBytesPerPrincipal, "bytes of subscribed URIs one principal holds"},
		{&l.SubscriptionBytes, "max-subscription-bytes", limits.DefaultSubscriptionBytes, "bytes of subscribed URIs a node holds"},
		{&l.StreamsPerPrincipal, "max-streams-per-principal", limits.DefaultStreamsPerPrincipal, "open notification streams (GET streams, subscriptions/listen) of one principal"},
		{&l.Streams, "max-streams", limits.DefaultStreams, "open notification streams on a node"},
		{&l.PendingPerPrincipal, "max-pending-per-principal", limits.DefaultPendingPerPrincipal, "waits for the client (server-to-client requests, task input rounds, accepted URL-mode uploads) of one principal"},
		{&l.Pending, "max-pending", limits.DefaultPending, "waits for the client (server-to-client requests, task input rounds, accepted URL-mode uploads) on a node"},
		{&l.ClaimsPerMinute, "max-claims-per-minute", limits.DefaultClaimsPerMinute, "claims (session records, single-use link redemptions, upload ids) one principal can make a node write to the store a minute"},
	} {
		fs.Int64Var(f.v, f.name, f.def, f.usage+" (0: no bound)")
	}
}

// noBoundAtZero returns l with every 0 (no bound on the command line)
// made negative, limits.Limits' "no bound" (its 0 is the default).
func noBoundAtZero(l limits.Limits) limits.Limits {
	for _, v := range []*int64{&l.SessionsPerPrincipal, &l.Sessions, &l.CapabilityBytes,
		&l.SubscriptionsPerPrincipal, &l.Subscriptions, &l.SubscriptionBytesPerPrincipal, &l.SubscriptionBytes,
		&l.StreamsPerPrincipal, &l.Streams, &l.PendingPerPrincipal, &l.Pending, &l.ClaimsPerMinute} {
		if *v == 0 {
			*v = -1
		}
	}
	return l
}
