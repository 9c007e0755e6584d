// Package admin is the operator's listener (--admin-listen): /metrics in
// the Prometheus text format and the runtime profiles under /debug/pprof/.
// It is meant for a private address (the pod network, a monitoring VLAN);
// the public listener never serves pprof.
//
// Every request passes two checks first. The Host header must be
// localhost, an IP address literal (127.0.0.1, [::1], a pod address: a
// DNS-rebinding page sends its own name, never an address) or a name of
// Options.Hosts (--admin-hosts), any port; otherwise 403. With
// Options.Token (MCPBLOB_ADMIN_TOKEN, from the environment only) every
// request must carry "Authorization: Bearer <token>", compared in
// constant time; otherwise 401 with a Bearer challenge. Both answers are JSON
// {"error":{"code","message"}}. A listener bound to a non-loopback address
// without a token still starts, with a WARN at start: a network policy may
// be what guards it, but nothing in the process does.
package admin
