package mcp

import (
	"bytes"

	"github.com/mcpblob/mcpblob/core/budget"
	"github.com/mcpblob/mcpblob/core/mcp/session"
)

// What notification streams and resource subscriptions cost their
// principal (budgets.go): an open stream, GET or subscriptions/listen,
// holds one unit of s.budgets.streams until it ends; a subscription,
// resources/subscribe or listen, one of s.budgets.subscriptions and its
// URI's bytes of s.budgets.subscriptionBytes while it is held, whether or
// not the resource exists.

// subscriptionsWhat names the subscription limits in a refusal.
const subscriptionsWhat = "resource subscriptions and their URI bytes"

// openStream takes one open notification stream for principal; the
// caller releases the holding when the stream ends.
func (s *Server) openStream(principal string) (*budget.Holding, *Error) {
	h, err := budget.TakeAll(principal, budget.Units{Pool: s.budgets.streams, N: 1})
	if err != nil {
		return nil, limitError(err, "open notification streams (GET and subscriptions/listen)")
	}
	return h, nil
}

// subscriptionBudget is the pools resource subscriptions are charged to.
func (s *Server) subscriptionBudget() session.Budget {
	return session.Budget{Count: s.budgets.subscriptions, Bytes: s.budgets.subscriptionBytes}
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
