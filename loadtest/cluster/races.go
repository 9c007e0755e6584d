package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/mcpblob/mcpblob/loadtest/rig/mcpc"
)

// The one-time facts (a single-use link redeemed, an upload id taken, a
// session live) are claims: objects created with If-None-Match: *, which
// the store must honour atomically across every gateway of the cluster.
// claimRounds keys are raced on the three gateways directly,
// racersPerGateway PUTs each; uploadRaces races the three nodes for one
// upload endpoint.
const (
	claimRounds      = 24
	racersPerGateway = 2
	uploadRaces      = 5
	raceBucket       = "races" // apart from mcpblob's bucket
)

// claimRaces: claimRounds keys are raced at once, each by
// racersPerGateway conditional PUTs on every gateway, all released
// together; each key must be created exactly once and every other PUT
// refused with 412 PreconditionFailed. Every other key was created and
// deleted just before (a claim released or swept, then taken again). The
// rounds run at once because SeaweedFS serialises conditional writes of one
// key with a lock whose waiters retry about once a second: one round at a
// time would take seconds each.
func claimRaces(ctx context.Context, cl *cluster, rep *report) {
	const g = "claims"
	const what = "If-None-Match: * exact across 3 S3 gateways"
	clients := cl.weed.clients
	if err := clients[0].MakeBucket(ctx, raceBucket, minio.MakeBucketOptions{}); err != nil {
		rep.fail(g, "create bucket "+raceBucket, err.Error())
		rep.sum(what, false, err.Error())
		return
	}
	keys := make([]string, claimRounds)
	for round := range keys {
		keys[round] = fmt.Sprintf("race/r%d", round)
		if round%2 == 1 {
			err := putIfAbsent(ctx, clients[0], keys[round])
			if err == nil {
				err = clients[1].RemoveObject(ctx, raceBucket, keys[round], minio.RemoveObjectOptions{})
			}
			if err != nil {
				rep.fail(g, "create and delete a key before its race", err.Error())
				rep.sum(what, false, err.Error())
				return
			}
		}
	}
	t := time.Now()
	results := raceClaims(ctx, clients, keys)
	took := time.Since(t)
	exact := 0
	refusals := map[string]int{}
	var problems []string
	for round, errs := range results {
		won, unanswered := 0, 0
		for _, err := range errs {
			var resp minio.ErrorResponse
			switch {
			case err == nil:
				won++
			case errors.As(err, &resp):
				refusals[fmt.Sprintf("%d %s", resp.StatusCode, resp.Code)]++
			default:
				unanswered++
				refusals["no answer"]++
				problems = append(problems, err.Error())
			}
		}
		if won == 1 && unanswered == 0 {
			exact++
		} else {
			problems = append(problems, fmt.Sprintf("%s: %d created", keys[round], won))
		}
	}
	racers := racersPerGateway * len(clients)
	ok := exact == claimRounds && len(refusals) == 1 && refusals["412 PreconditionFailed"] == claimRounds*(racers-1)
	rep.add(g, fmt.Sprintf("%d keys raced at once, each by %d conditional PUTs (%d on each gateway)", claimRounds, racers, racersPerGateway), ok,
		fmt.Sprintf("%d of %d keys created exactly once (half of them deleted just before); the other PUTs answered: %s; all answered in %.1f s%s",
			exact, claimRounds, counts(refusals, "times"), took.Seconds(), listed(problems)))
	rep.sum(what, ok,
		fmt.Sprintf("%d of %d keys raced by %d PUTs at once were created exactly once, every other PUT refused with 412", exact, claimRounds, racers))
}

// raceClaims sends racersPerGateway conditional PUTs of every key to each
// gateway, all released together, and returns their errors by key.
func raceClaims(ctx context.Context, clients []*minio.Client, keys []string) [][]error {
	start := make(chan struct{})
	errs := make([][]error, len(keys))
	var wg sync.WaitGroup
	for k, key := range keys {
		errs[k] = make([]error, racersPerGateway*len(clients))
		for i := range errs[k] {
			wg.Go(func() {
				<-start
				errs[k][i] = putIfAbsent(ctx, clients[i%len(clients)], key)
			})
		}
	}
	close(start)
	wg.Wait()
	return errs
}

// putIfAbsent creates key, empty, only if it does not exist.
func putIfAbsent(ctx context.Context, c *minio.Client, key string) error {
	opts := minio.PutObjectOptions{ContentType: "application/octet-stream"}
	opts.SetMatchETagExcept("*")
	_, err := c.PutObject(ctx, raceBucket, key, bytes.NewReader(nil), 0, opts)
	return err
}

// uploadEndpointRaces: an upload endpoint minted on mcpblob1 gets the same
// PUT from the three nodes at once; its upload id is a claim, so exactly
// one upload is stored (201) and the two others refused (409).
func uploadEndpointRaces(ctx context.Context, cl *cluster, rep *report, n1, n2, n3 *node) bool {
	const g = "uploads"
	data := content(64 << 10)
	data[1] ^= 0x5a
	exact := 0
	var tally []string
	for i := range uploadRaces {
		var up upload
		key := fmt.Sprintf("cluster/check/endpoint-race-%d", i)
		if err := cl.mint(ctx, n1.url(), "/v1/uploads", map[string]any{"key": key, "maxSize": len(data)}, &up); err != nil {
			rep.fail(g, "POST /v1/uploads on mcpblob1", err.Error())
			return false
		}
		statuses := make([]int, nodeCount)
		var wg sync.WaitGroup
		for j, n := range []*node{n1, n2, n3} {
			wg.Go(func() {
				statuses[j], _, _ = cl.call(ctx, http.MethodPut, on(up.URL, cl.lb, n), data, "Content-Type", "application/octet-stream")
			})
		}
		wg.Wait()
		st := map[int]int{}
		for _, s := range statuses {
			st[s]++
		}
		status, got, err := cl.call(ctx, http.MethodGet, n2.url()+"/v1/blobs/"+key, nil)
		if st[http.StatusCreated] == 1 && st[http.StatusConflict] == nodeCount-1 && err == nil && status == http.StatusOK && sum(got) == sum(data) {
			exact++
		}
		tally = append(tally, fmt.Sprint(statuses))
	}
	ok := exact == uploadRaces
	rep.add(g, fmt.Sprintf("one upload endpoint: %d races of the three nodes", uploadRaces), ok,
		fmt.Sprintf("%d of %d with exactly one 201 (read back whole) and two 409 (http per node 1,2,3: %s)", exact, uploadRaces, strings.Join(tally, " ")))
	return ok
}

// endSessionRace: a session used on every node is ended by DELETE /mcp on
// the three nodes at once; whatever each DELETE answers, the session is
// refused (404) on every node afterwards.
func endSessionRace(ctx context.Context, cl *cluster, rep *report, all []*node) bool {
	const g = "sessions"
	c := cl.mcp(all[0].url(), "")
	if err := c.Init(ctx, nil); err != nil {
		rep.fail(g, "third session on mcpblob1", err.Error())
		return false
	}
	for _, n := range all {
		if st, err := mcpStatus(ctx, cl.mcp(n.url(), c.Session), "tools/list"); err != nil || st != http.StatusOK {
			rep.fail(g, "third session used on every node before its end", fmt.Sprintf("%s: http %d, err %v", n.name, st, err))
			return false
		}
	}
	deletes := make([]int, len(all))
	var wg sync.WaitGroup
	for i, n := range all {
		wg.Go(func() {
			deletes[i], _, _ = cl.call(ctx, http.MethodDelete, n.url()+"/mcp", nil, "Mcp-Session-Id", c.Session, "MCP-Protocol-Version", mcpc.Protocol)
		})
	}
	wg.Wait()
	after := map[string]int{}
	refused := 0
	for _, n := range all {
		st, _ := mcpStatus(ctx, cl.mcp(n.url(), c.Session), "tools/list")
		after[n.name] = st
		if st == http.StatusNotFound {
			refused++
		}
	}
	answered := true
	for _, st := range deletes {
		answered = answered && (st/100 == 2 || st == http.StatusNotFound)
	}
	ok := refused == len(all) && answered
	var figures []string
	for _, name := range slices.Sorted(maps.Keys(after)) {
		figures = append(figures, fmt.Sprintf("%s %d", name, after[name]))
	}
	rep.add(g, "session ended by DELETE on the three nodes at once, then refused on each", ok,
		fmt.Sprintf("DELETE answers per node 1,2,3: %v (want 2xx or 404); then tools/list: http %s (want 404 on all %d)", deletes, strings.Join(figures, ", "), len(all)))
	return ok
}
