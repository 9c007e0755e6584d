package localfs

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sync"
	"time"
)

// seed writes n one-byte objects named folder+"k%07d" straight into the
// store folder dir (data file and sidecar, no fsync, no journal): the fast
// way to build a large store for a benchmark, about 1,000 times quicker than
// committing each object. No Store may have dir open meanwhile.
func seed(dir, folder string, n int) error {
	sum := sha256.Sum256([]byte("x"))
	rec := record{Size: 1, MTime: time.Now().UnixNano(), SHA256: hex.EncodeToString(sum[:]), MediaType: "application/octet-stream"}
	for _, d := range []string{folder, metaDir + "/" + folder} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(d)), dirMode); err != nil {
			return err
		}
	}
	const workers = 16
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n && errs[w] == nil; i += workers {
				errs[w] = seedOne(dir, folder+fmt.Sprintf("k%07d", i), rec)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func seedOne(dir, key string, rec record) error {
	data := filepath.Join(dir, filepath.FromSlash(key))
	if err := os.WriteFile(data, []byte("x"), fileMode); err != nil {
		return err
	}
	t := time.Unix(0, rec.MTime)
	if err := os.Chtimes(data, t, t); err != nil {
		return err
	}
	b, err := marshalSidecar(&sidecar{Versions: []record{rec}})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, filepath.FromSlash(path.Join(metaDir, key))), b, fileMode)
}
