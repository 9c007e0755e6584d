// Package scale measures bench/compare's targets P8, P9 and P10
// (docs/design.md): mcpblob at scale — many concurrent 64 MiB readers, the
// S3 path, and paging a folder of 100,000 blobs — each side by side with its
// reference over three runs, reported as a pair.Target. It starts its own
// SeaweedFS node and mcpblob servers from the binaries it is given.
package scale

import (
	"context"
	"time"

	"github.com/mcpblob/mcpblob/bench/internal/pair"
)

// Options are the harness settings the targets read.
type Options struct {
	Budget time.Duration // no run starts after this long from the start
	Quick  bool          // fewer and smaller runs: a harness check, not a result
}

// Peer is a running peer server that P8 compares mcpblob's memory with
// (the go-sdk peer, by Name "go-sdk").
type Peer struct {
	Name     string
	Base     string // http://host:port
	PID      int
	Baseline int64 // idle RSS in bytes
}

// P9Alone runs P9 alone on its own SeaweedFS node and mcpblob (-only P9).
func P9Alone(ctx context.Context, opt *Options, work string, bins map[string]string, start time.Time) (*pair.Target, error) {
	t := newP9Target()
	rig, err := startS3Rig(ctx, bins, work)
	if err != nil {
		return nil, err
	}
	defer rig.stop()
	timeTarget(t, func() { runP9(ctx, opt, rig, t, start) })
	return t, nil
}
