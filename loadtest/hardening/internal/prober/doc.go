// Package prober times GET /healthz for `make hardening` from a process of
// its own: the harness starts itself again with [Arg] (main calls [Run]),
// and [Start] reads the prober's results, one line per probe on its
// stdout ("ok|fail NANOSECONDS"); the prober stops when its stdin closes.
//
// In the harness's own process the probe's goroutine queued behind the
// slow-body storm's 2,000 client goroutines, which wake together (every
// connection's byte goes out at the same instant): in one run an
// in-process probe measured 193 ms where curl beside it, in a process of
// its own, measured at most 55 ms. The limit is on the
// server's answer as a load balancer's health check sees it, not on the
// harness's scheduling. Each probe opens a new connection, as such a check
// does, unless keep-alive is asked for.
package prober
