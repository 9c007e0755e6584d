package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Objects stored before the load, read back while and after one of
// MinIO's four drives is wiped under the load: one erasure set of 4 drives
// (2 data + 2 parity shards per object) reads every object from any two.
// The small ones are inlined in MinIO's metadata, the larger ones are parts.
var driveSizes = []int{16 << 10, 200 << 10, 1 << 20, 3 << 20}

const driveReaders = 2

// seedDriveObjects stores the objects the wipe check reads, through node 1,
// and returns them with the seeded blobs of the cross-node checks.
func seedDriveObjects(ctx context.Context, cl *cluster) (map[string]sent, error) {
	objs := map[string]sent{
		smallKey: {smallSize, sum(content(smallSize))},
		largeKey: {largeSize, sum(content(largeSize))},
	}
	for _, size := range driveSizes {
		key := fmt.Sprintf("cluster/drive/%d", size)
		data := content(size)
		copy(data, key)
		if err := cl.put(ctx, cl.nodes[0].url(), key, data); err != nil {
			return nil, err
		}
		objs[key] = sent{int64(size), sum(data)}
	}
	return objs, nil
}

// wipeRun is what happened to reads once the drive was wiped.
type wipeRun struct {
	drive     string
	at        time.Time // wiped (contents removed)
	removed   int       // entries removed from the drive's top level
	err       error     // the wipe's own failure
	ok, fails int       // reads while the load ran
	finalOK   int       // the pass over every object on every target after the load
	finalBad  int
	problems  []string
	targets   []string
}

// startWipe wipes MinIO's last drive at `at` (rm -rf of its contents, the
// folder stays, as a disk replaced under a running server) and then reads
// objs in a loop, through nginx and directly on the nodes other than
// victim, until the returned function is called; that function makes one
// more pass over every object on every target and returns the counts.
func startWipe(ctx context.Context, cl *cluster, objs map[string]sent, at time.Time, victim *node) func() *wipeRun {
	w := &wipeRun{drive: cl.drives[len(cl.drives)-1]}
	bases := []string{cl.lb}
	w.targets = []string{"nginx"}
	for _, n := range cl.nodes {
		if n != victim {
			bases = append(bases, n.url())
			w.targets = append(w.targets, n.name)
		}
	}
	var keys []string
	for k := range objs {
		keys = append(keys, k)
	}
	var mu sync.Mutex
	read := func(i int, final bool) {
		k, base := keys[i%len(keys)], bases[(i/len(keys))%len(bases)]
		status, b, err := cl.call(ctx, http.MethodGet, base+"/v1/blobs/"+k, nil)
		good := err == nil && status == http.StatusOK && int64(len(b)) == objs[k].size && sum(b) == objs[k].sha
		mu.Lock()
		defer mu.Unlock()
		switch {
		case good && final:
			w.finalOK++
		case good:
			w.ok++
		case final:
			w.finalBad++
		default:
			w.fails++
		}
		if !good && len(w.problems) < 5 {
			w.problems = append(w.problems, fmt.Sprintf("%s on %s: http %d, %d bytes, err %v", k, w.targets[(i/len(keys))%len(bases)], status, len(b), err))
		}
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case <-time.After(time.Until(at)):
		case <-stop:
			w.err = fmt.Errorf("the load ended before the wipe")
			return
		}
		entries, err := os.ReadDir(w.drive)
		if err == nil {
			err = wipe(w.drive, entries)
		}
		w.at, w.removed, w.err = time.Now(), len(entries), err
		logf("wiped MinIO's %s (%d entries)", filepath.Base(w.drive), len(entries))
		var readers sync.WaitGroup
		for r := range driveReaders {
			readers.Go(func() {
				for i := r; ; i += driveReaders {
					select {
					case <-stop:
						return
					case <-time.After(20 * time.Millisecond):
					}
					read(i, false)
				}
			})
		}
		readers.Wait()
	})
	return func() *wipeRun {
		close(stop)
		wg.Wait()
		if !w.at.IsZero() {
			for i := range len(keys) * len(bases) {
				read(i, true)
			}
		}
		return w
	}
}

// wipe removes entries from dir. MinIO keeps writing to the drive (its
// tmp folder above all), so a removal can meet a folder that just gained a
// file ("directory not empty"), as rm -rf would: it is tried again, up to
// 20 times.
func wipe(dir string, entries []os.DirEntry) error {
	var err error
	for range 20 {
		err = nil
		for _, e := range entries {
			if e := os.RemoveAll(filepath.Join(dir, e.Name())); e != nil && err == nil {
				err = e
			}
		}
		if err == nil {
			return nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	return err
}

// report adds the wipe's rows and summary line.
func (w *wipeRun) report(rep *report, r *loadRun) {
	const g = "drive"
	if w.err != nil || w.at.IsZero() {
		rep.fail(g, "a MinIO drive wiped under load", fmt.Sprintf("%s: %v", w.drive, w.err))
		rep.sum("reads surviving a wiped drive", false, fmt.Sprintf("no wipe: %v", w.err))
		return
	}
	rep.add(g, "a MinIO drive wiped under load", true, fmt.Sprintf("rm -rf %s/* (%d entries) %.1f s into the load, %.1f s after the kill; the load kept running %.1f s",
		filepath.Base(w.drive), w.removed, w.at.Sub(r.loadAt).Seconds(), w.at.Sub(r.killedAt).Seconds(), r.end.Sub(w.at).Seconds()))
	healed := "not yet"
	if _, err := os.Stat(filepath.Join(w.drive, ".minio.sys", "format.json")); err == nil {
		healed = "yes"
	}
	rep.add(g, "objects stored before the wipe read back whole while the load ran", w.ok > 0 && w.fails == 0,
		fmt.Sprintf("%d reads ok, %d failed (%d objects of 4 KiB–3 MiB, %d readers, through %v)%s",
			w.ok, w.fails, len(driveSizes)+2, driveReaders, w.targets, listed(w.problems)))
	rep.add(g, "…and once more each on every target after the load", w.finalBad == 0,
		fmt.Sprintf("%d ok, %d failed; MinIO had re-formatted the wiped drive by then: %s", w.finalOK, w.finalBad, healed))
	rep.sum("reads surviving a wiped drive", w.ok > 0 && w.fails == 0 && w.finalBad == 0,
		fmt.Sprintf("%d of %d reads of objects stored before the wipe succeeded (%d failed)", w.ok+w.finalOK, w.ok+w.fails+w.finalOK+w.finalBad, w.fails+w.finalBad))
}
