// Package admin is the operator's listener (--admin-listen): /metrics in
// the Prometheus text format and the runtime profiles under /debug/pprof/.
// It is meant for a private address (the pod network, a monitoring VLAN);
// the public listener never serves pprof.
package admin
