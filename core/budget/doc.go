// Package budget counts what clients can make a node hold — sessions,
// bytes of stored capabilities, resource subscriptions and their URI bytes,
// open notification streams, pending server-to-client rounds — per
// principal and per node, and paces what they can make the shared store
// hold (claims written per principal per minute).
//
// A [Pool] is one such resource: [Pool.Take] reserves units for a
// principal, or refuses with an [*Exceeded] naming the limit and the scope
// (principal or node) that would be passed; [Pool.Give] returns them. A
// [Holding] is units of several pools taken together ([TakeAll]: all or
// none) and given back together, once. A [Rate] admits at most a number
// of events per principal per minute. Pools and rates log a refusal once
// at WARN with the principal (at most once a minute per limit and
// principal), never the request's payload.
//
// Memory: a pool holds one map entry per principal that holds units now,
// a rate one entry per principal seen in the current minute.
//
// It imports the standard library only; core/mcp and core/server turn an
// *Exceeded into their protocol's answer (a JSON-RPC error, an HTTP 429 or
// 503 with Retry-After).
package budget
