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

// Objects stored before the load, read back while and after a volume
// server is SIGKILLed and its folder wiped under the load: every volume is
// on two of the three servers (replication 001), so each object reads from
// the surviving copy. Each is one chunk or several of a volume (the S3
// gateway chunks at 8 MiB; mcpblob sends parts of 5 MiB and more).
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

// wipeRun is what happened once a volume server was SIGKILLed and its
// folder wiped under the load.
type wipeRun struct {
	volume    int    // index in cl.weed.volumes
	addr      string // its HTTP address
	pid       int
	held      int64     // bytes in its folder when it was killed
	objects   int       // objects read across the kill with a chunk on it
	inline    int       // objects the filer keeps in its metadata (no chunk)
	placeErr  error     // where the objects are could not be read
	at        time.Time // killed, reaped and wiped
	removed   int       // entries removed from its folder
	err       error     // the kill's or the wipe's own failure
	ok, fails int       // reads while the load ran
	finalOK   int       // the pass over every object on every target after the heal
	finalBad  int
	problems  []string
	targets   []string
	heal      healRun
}

// startWipe SIGKILLs, at `at`, the volume server holding a copy of the
// most of objs (killAndWipe), and once it is reaped removes its folder's contents (a disk
// lost with its server); it then reads objs in a loop, through nginx and
// directly on the nodes other than victim, until the returned function is
// called. That function restarts the volume server on its empty folder,
// has SeaweedFS copy the missing replicas back (volume.fix.replication),
// makes one more pass over every object on every target and returns the
// counts.
func startWipe(ctx context.Context, cl *cluster, objs map[string]sent, at time.Time, victim *node) func() *wipeRun {
	w := &wipeRun{volume: -1}
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
			w.err = fmt.Errorf("the load ended before the volume server was killed")
			return
		}
		if w.err = killAndWipe(ctx, cl.weed, w, keys); w.err != nil {
			return
		}
		logf("SIGKILL SeaweedFS volume server %d (pid %d, %d MiB, a copy of %d objects read across it) and wiped its folder (%d entries)", w.volume+1, w.pid, w.held>>20, w.objects, w.removed)
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
			w.heal = heal(ctx, cl.weed, w.volume)
			for i := range len(keys) * len(bases) {
				read(i, true)
			}
		}
		return w
	}
}

// killAndWipe SIGKILLs the volume server holding a copy of the most of
// the objects under keys (then the most bytes), waits until it is reaped
// and removes its folder's contents (the folder stays, as a disk replaced
// under a stopped server).
func killAndWipe(ctx context.Context, s *store, w *wipeRun, keys []string) error {
	pl, err := placeObjects(ctx, s, keys)
	var nodes map[string][]int
	if err == nil {
		nodes, err = topology(ctx, s.master)
	}
	w.placeErr = err
	for i, v := range s.volumes {
		var objects int
		if err == nil {
			objects, w.inline = pl.on(nodes[v.Addr.HTTP])
		}
		n := folderBytes(v.Dir)
		if w.volume < 0 || objects > w.objects || (objects == w.objects && n > w.held) {
			w.volume, w.held, w.objects = i, n, objects
		}
	}
	v := s.volumes[w.volume]
	w.addr, w.pid = v.Addr.HTTP, v.PID()
	if err := v.Kill(); err != nil {
		return fmt.Errorf("SIGKILL volume server %d: %w", w.volume+1, err)
	}
	entries, err := os.ReadDir(v.Dir)
	if err == nil {
		err = wipe(v.Dir, entries)
	}
	w.at, w.removed = time.Now(), len(entries)
	return err
}

// folderBytes is the size of the files under dir.
func folderBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// wipe removes entries from dir, tried again up to 20 times when a removal
// fails.
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
	const g = "volume"
	const what = "a SeaweedFS volume server SIGKILLed and its folder wiped under load"
	if w.err != nil || w.at.IsZero() {
		rep.fail(g, what, fmt.Sprintf("volume server %d: %v", w.volume+1, w.err))
		rep.sum("reads surviving a lost volume server", false, fmt.Sprintf("no kill: %v", w.err))
		return
	}
	held := fmt.Sprintf("it held a copy of %d of the %d objects read across it (%d kept inline by the filer, on no volume)", w.objects, len(driveSizes)+2, w.inline)
	if w.placeErr != nil {
		held = "where the objects are was not read: " + w.placeErr.Error()
	}
	rep.add(g, what, w.placeErr == nil && w.objects > 0, fmt.Sprintf("volume server %d on %s (pid %d, %.1f MiB in its folder) killed and rm -rf of its folder (%d entries) %.1f s into the load, %.1f s after the node's kill; the load kept running %.1f s; %s",
		w.volume+1, w.addr, w.pid, float64(w.held)/(1<<20), w.removed, w.at.Sub(r.loadAt).Seconds(), w.at.Sub(r.killedAt).Seconds(), r.end.Sub(w.at).Seconds(), held))
	rep.add(g, "objects stored before the kill read back whole while the load ran", w.ok > 0 && w.fails == 0,
		fmt.Sprintf("%d reads ok, %d failed (%d objects of 4 KiB–3 MiB, %d readers, through %v)%s",
			w.ok, w.fails, len(driveSizes)+2, driveReaders, w.targets, listed(w.problems)))
	w.heal.report(rep)
	rep.add(g, "…and once more each on every target after the load and the restart", w.finalBad == 0,
		fmt.Sprintf("%d ok, %d failed", w.finalOK, w.finalBad))
	rep.sum("reads surviving a lost volume server", w.ok > 0 && w.fails == 0 && w.finalBad == 0,
		fmt.Sprintf("%d of %d reads of objects stored before the kill succeeded (%d failed)", w.ok+w.finalOK, w.ok+w.fails+w.finalOK+w.finalBad, w.fails+w.finalBad))
}
