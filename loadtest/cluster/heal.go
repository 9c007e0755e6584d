package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/loadtest/rig/weed"
)

// healRun is the wiped volume server's return: restarted on its empty
// folder at its address (a disk replaced in the same machine). SeaweedFS
// does not copy the lost replicas back by itself: `volume.fix.replication
// -apply` in `weed shell` does, but it waits 15 s before each of its
// passes, too long for this check, which reports instead how many volumes
// were left with one copy.
type healRun struct {
	restartErr     error
	took           time.Duration // until the master listed it again
	volumes, alone int           // volumes in the cluster, those with one copy
	topoErr        error
}

// heal restarts volume server i on its (wiped) folder and counts the
// volumes with one copy in the master's topology.
func heal(ctx context.Context, s *store, i int) healRun {
	var h healRun
	start := time.Now()
	old := s.volumes[i]
	v, err := weed.StartVolume(s.bin, old.Dir, s.master, &old.Addr)
	h.took = time.Since(start)
	if err != nil {
		h.restartErr = err
		return h
	}
	s.killed = map[int]*weed.Service{i: old}
	s.volumes[i] = v
	h.volumes, h.alone, h.topoErr = replicaCounts(ctx, s.master)
	return h
}

// replicaCounts reads the master's topology and returns how many volumes
// it holds and how many of those have a single copy.
func replicaCounts(ctx context.Context, master *weed.Service) (volumes, alone int, err error) {
	nodes, err := topology(ctx, master)
	if err != nil {
		return 0, 0, err
	}
	copies := map[int]int{}
	for _, ids := range nodes {
		for _, id := range ids {
			copies[id]++
		}
	}
	for _, n := range copies {
		if n == 1 {
			alone++
		}
	}
	return len(copies), alone, nil
}

// topology reads the master's /dir/status: the volume ids each volume
// server (by its HTTP address) holds.
func topology(ctx context.Context, master *weed.Service) (map[string][]int, error) {
	var st struct {
		Topology struct {
			DataCenters []struct {
				Racks []struct {
					DataNodes []struct{ Url, VolumeIds string }
				}
			}
		}
	}
	if err := getJSON(ctx, "http://"+master.Addr.HTTP+"/dir/status", &st); err != nil {
		return nil, fmt.Errorf("master /dir/status: %w", err)
	}
	nodes := map[string][]int{}
	for _, dc := range st.Topology.DataCenters {
		for _, rack := range dc.Racks {
			for _, dn := range rack.DataNodes {
				ids, err := volumeIDs(dn.VolumeIds)
				if err != nil {
					return nil, err
				}
				nodes[dn.Url] = ids
			}
		}
	}
	return nodes, nil
}

// getJSON GETs url and decodes its 200 answer into v.
func getJSON(ctx context.Context, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: http %d", url, resp.StatusCode)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// volumeIDs expands a data node's VolumeIds of /dir/status ("1-3 5 7-9",
// ranges of consecutive ids; "…" when the master cut the list) into ids.
func volumeIDs(s string) ([]int, error) {
	var ids []int
	for f := range strings.FieldsSeq(s) {
		if f == "..." {
			return nil, fmt.Errorf("master /dir/status: volume list cut short: %q", s)
		}
		lo, hi, isRange := strings.Cut(f, "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || b < a {
			return nil, fmt.Errorf("master /dir/status: volume ids %q", s)
		}
		for id := a; id <= b; id++ {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// report adds the restart's row.
func (h healRun) report(rep *report) {
	const g = "volume"
	if h.restartErr != nil {
		rep.fail(g, "wiped volume server restarted on its empty folder", h.restartErr.Error())
		return
	}
	figure := fmt.Sprintf("the master listed it again %.1f s after the restart", h.took.Seconds())
	if h.topoErr != nil {
		figure += fmt.Sprintf("; topology not read: %v", h.topoErr)
	} else {
		figure += fmt.Sprintf("; %d of %d volumes kept one copy (SeaweedFS copies replicas back only when told: `volume.fix.replication -apply` in weed shell)", h.alone, h.volumes)
	}
	rep.add(g, "wiped volume server restarted on its empty folder", true, figure)
}
