package main

import (
	"context"

	"github.com/mcpblob/mcpblob/loadtest/cluster/tusjs"
)

// tusJS runs the tus-js-client uploads (package tusjs) through nginx,
// killing and restarting the nodes they talk to.
func tusJS(ctx context.Context, c config, cl *cluster, rep *report) {
	var nodes []tusjs.Node
	for _, n := range cl.nodes {
		nodes = append(nodes, tusjs.Node{Name: n.name,
			PID: func() int {
				if n.proc == nil || n.proc.Exited() {
					return 0
				}
				return n.proc.PID()
			},
			KillRestart: func() error {
				if err := n.proc.Kill(); err != nil {
					return err
				}
				return n.start()
			}})
	}
	res := tusjs.Run(ctx, tusjs.Config{NodeDir: c.nodeDir, Base: cl.lb, APIKey: cl.apiKey, HTTP: cl.http,
		Work: cl.work, Nodes: nodes, Logf: logf})
	for _, r := range res.Rows {
		rep.add(r.Group, r.Name, r.OK, r.Detail)
	}
	for _, r := range res.Summary {
		rep.sum(r.Name, r.OK, r.Detail)
	}
}
