package mcp

import (
	"bytes"

	"github.com/mcpblob/mcpblob/core/budget"
	"github.com/mcpblob/mcpblob/core/mcp/limits"
	"github.com/mcpblob/mcpblob/core/mcp/session"
)

// What notification streams and resource subscriptions cost their
// principal (package limits): an open stream, GET or subscriptions/listen,
// holds one unit of s.budgets.Streams until it ends; a subscription,
// resources/subscribe or listen, one of s.budgets.Subscriptions and its
// URI's bytes of s.budgets.SubscriptionBytes while it is held, whether or
// not the resource exists.

// subscriptionsWhat names the subscription limits in a refusal.
const subscriptionsWhat = "resource subscriptions and their URI bytes"

// Claims is the server's rate of claims per principal a minute
// ([limits.Limits].ClaimsPerMinute), shared with the transport that writes
// claims of its own (single-use links, upload ids).
func (s *Server) Claims() *budget.Rate { return s.budgets.Claims }

// Budgets are the server's pools of protocol state and its claims rate,
// for the transport's metrics ([limits.Pools.Held], [limits.Pools.Notify]).
func (s *Server) Budgets() limits.Pools { return s.budgets }

// subscriptionBudget is the pools resource subscriptions are charged to.
func (s *Server) subscriptionBudget() session.Budget {
	return session.Budget{Count: s.budgets.Subscriptions, Bytes: s.budgets.SubscriptionBytes}
}

// holdings are released together.
type holdings []*budget.Holding

func (hs holdings) Release() {
	for _, h := range hs {
		h.Release()
	}
}

// forgetRequest lets go of the request a long-lived call came in: its
// params, _meta and arguments are slices of the whole message as it
// arrived, its files spooled strings. The call keeps a copy of its id.
func (c *Call) forgetRequest() {
	c.id = bytes.Clone(c.id)
	c.params, c.meta, c.args, c.caps, c.progressToken = nil, nil, nil, nil, nil
	c.files.Discard()
}
