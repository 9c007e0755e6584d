package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/mcpblob/mcpblob/loadtest/rig/weed"
)

// The SeaweedFS cluster under the nodes: one master, volumeCount volume
// servers, one filer, and one S3 gateway per mcpblob node. Every volume is
// kept on two servers of the rack (replication 001), so one volume server
// may die with its disk.
const (
	volumeCount = 3
	replication = "001"
	bucket      = "mcpblob"
)

// store is the SeaweedFS cluster the check started.
type store struct {
	bin       string
	dir       string
	master    *weed.Service
	volumes   []*weed.Service       // the wiped one is replaced by its restart
	killed    map[int]*weed.Service // the processes SIGKILLed, by index
	filer     *weed.Service
	gateways  []*weed.Service // gateways[i] serves node i
	clients   []*minio.Client // one per gateway, for the harness's own S3 checks
	user, key string
}

// startStore starts the cluster under dir and creates the bucket through
// the first gateway; it returns once every gateway sees the bucket. The
// returned store is never nil, so its stop also cleans up after a failed
// start.
func startStore(ctx context.Context, bin, dir, user, secret string) (*store, error) {
	s := &store{bin: bin, dir: dir, user: user, key: secret}
	var err error
	if s.master, err = weed.StartMaster(bin, filepath.Join(dir, "master"), weed.MasterOptions{Replication: replication, VolumeSizeLimitMB: 64}); err != nil {
		return s, err
	}
	s.volumes = make([]*weed.Service, volumeCount)
	errs := make([]error, volumeCount)
	var wg sync.WaitGroup
	for i := range volumeCount {
		wg.Go(func() { s.volumes[i], errs[i] = weed.StartVolume(bin, s.volumeDir(i), s.master, nil) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return s, err
	}
	if s.filer, err = weed.StartFiler(bin, filepath.Join(dir, "filer"), s.master); err != nil {
		return s, err
	}
	creds := weed.S3Options{AccessKey: user, SecretKey: secret}
	s.gateways = make([]*weed.Service, nodeCount)
	errs = make([]error, nodeCount)
	for i := range nodeCount {
		wg.Go(func() {
			s.gateways[i], errs[i] = weed.StartS3(bin, filepath.Join(dir, fmt.Sprintf("s3-%d", i+1)), s.filer, creds)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return s, err
	}
	for _, g := range s.gateways {
		c, err := weed.Client(g.Addr.HTTP, creds)
		if err != nil {
			return s, err
		}
		s.clients = append(s.clients, c)
	}
	return s, s.makeBucket(ctx)
}

func (s *store) volumeDir(i int) string {
	return filepath.Join(s.dir, fmt.Sprintf("volume%d", i+1))
}

// makeBucket creates the bucket and waits until every gateway answers a
// conditional PUT in it (weed.Writable).
func (s *store) makeBucket(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 45*time.Second)
	defer cancel()
	for i, c := range s.clients {
		if err := weed.Writable(ctx, c, bucket); err != nil {
			return fmt.Errorf("SeaweedFS gateway %d: %w", i+1, err)
		}
	}
	return nil
}

// stop stops the gateways, the filer, the volume servers and the master,
// each by its PID.
func (s *store) stop() {
	if s == nil {
		return
	}
	var wg sync.WaitGroup
	for _, g := range s.gateways {
		wg.Go(g.Stop)
	}
	wg.Wait()
	s.filer.Stop()
	for _, v := range s.volumes {
		wg.Go(v.Stop)
	}
	wg.Wait()
	s.master.Stop()
}

// describe is the report's setup lines of the store.
func (s *store) describe() []string {
	var vols []string
	for _, v := range s.volumes {
		vols = append(vols, v.Addr.HTTP)
	}
	var gws []string
	for _, g := range s.gateways {
		gws = append(gws, g.Addr.HTTP)
	}
	return []string{
		fmt.Sprintf("SeaweedFS %s: master on %s (replication %s, volumes of 64 MB), volume servers on %v, filer on %s (leveldb), S3 gateways on %v: folders under one temp folder",
			weed.Version(s.bin), s.master.Addr.HTTP, replication, vols, s.filer.Addr.HTTP, gws),
	}
}

// errorLines are the SeaweedFS services' log lines at glog's levels E
// and F, by service name, over every process of the check (a restarted
// volume server's first process included).
func (s *store) errorLines() map[string][]string {
	out := map[string][]string{}
	add := func(name string, svc *weed.Service) {
		if svc == nil {
			return
		}
		for line := range strings.Lines(svc.Logs()) {
			if len(line) > 1 && (line[0] == 'E' || line[0] == 'F') && line[1] >= '0' && line[1] <= '9' {
				out[name] = append(out[name], strings.TrimSpace(line))
			}
		}
	}
	add("master", s.master)
	add("filer", s.filer)
	for i, v := range s.volumes {
		add(fmt.Sprintf("volume server %d", i+1), v)
	}
	for i, v := range s.killed {
		add(fmt.Sprintf("volume server %d (killed)", i+1), v)
	}
	for i, g := range s.gateways {
		add(fmt.Sprintf("S3 gateway %d", i+1), g)
	}
	return out
}
