package limits

import (
	"log/slog"

	"github.com/mcpblob/mcpblob/core/budget"
	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
)

// Pools are a server's pools of protocol state and its claims rate.
type Pools struct {
	Sessions          *budget.Pool
	Subscriptions     *budget.Pool
	SubscriptionBytes *budget.Pool
	Streams           *budget.Pool
	Pending           *budget.Pool
	Claims            *budget.Rate
}

// NewPools returns the pools of l (with its defaults applied); log
// receives each pool's WARN when a bound is first met.
func NewPools(l Limits, log *slog.Logger) Pools {
	return Pools{
		Sessions:          budget.NewPool(budget.Limit{Name: "sessions", PerPrincipal: l.SessionsPerPrincipal, PerNode: l.Sessions}, log),
		Subscriptions:     budget.NewPool(budget.Limit{Name: "subscriptions", PerPrincipal: l.SubscriptionsPerPrincipal, PerNode: l.Subscriptions}, log),
		SubscriptionBytes: budget.NewPool(budget.Limit{Name: "subscription_bytes", PerPrincipal: l.SubscriptionBytesPerPrincipal, PerNode: l.SubscriptionBytes}, log),
		Streams:           budget.NewPool(budget.Limit{Name: "streams", PerPrincipal: l.StreamsPerPrincipal, PerNode: l.Streams}, log),
		Pending:           budget.NewPool(budget.Limit{Name: "pending", PerPrincipal: l.PendingPerPrincipal, PerNode: l.Pending}, log),
		Claims:            budget.NewRate("claims_per_minute", l.ClaimsPerMinute, log),
	}
}

// Held names the pools of protocol state by kind, for a gauge of what
// the node holds in all.
func (p Pools) Held() map[string]*budget.Pool {
	return map[string]*budget.Pool{"sessions": p.Sessions, "subscriptions": p.Subscriptions,
		"subscription_bytes": p.SubscriptionBytes, "streams": p.Streams, "pending": p.Pending}
}

// Notify makes f see every refusal of every pool and of the claims rate
// (a metric counts them); call it before the pools are shared.
func (p Pools) Notify(f func(*budget.Exceeded)) {
	for _, pool := range p.Held() {
		pool.Notify(f)
	}
	p.Claims.Notify(f)
}

// OpenStream takes one open notification stream (a GET stream or a
// subscriptions/listen) for principal; the caller releases the holding
// when the stream ends.
func (p Pools) OpenStream(principal string) (*budget.Holding, *jsonrpc.Error) {
	h, err := budget.TakeAll(principal, budget.Units{Pool: p.Streams, N: 1})
	if err != nil {
		return nil, Refusal(err, "open notification streams (GET and subscriptions/listen)")
	}
	return h, nil
}
