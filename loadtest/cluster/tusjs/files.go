package tusjs

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
)

// readBackSum GETs the blob through nginx, hashing it as it arrives,
// compares size and sha256, then deletes it (the store's disk is the
// work folder's).
func readBackSum(ctx context.Context, c Config, key string, size int64, want string) (bool, string) {
	u := c.Base + "/v1/blobs/" + key
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return false, err.Error()
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return false, err.Error()
	}
	h := sha256.New()
	n, err := io.Copy(h, resp.Body)
	resp.Body.Close()
	got := hex.EncodeToString(h.Sum(nil))
	ok := err == nil && resp.StatusCode == http.StatusOK && n == size && got == want
	if del, derr := http.NewRequestWithContext(ctx, http.MethodDelete, u, nil); derr == nil {
		if resp, derr := c.HTTP.Do(del); derr == nil {
			resp.Body.Close()
		}
	}
	return ok, fmt.Sprintf("http %d, %d bytes (want %d), sha256 %.12s… (want %.12s…), err %v", resp.StatusCode, n, size, got, want, err)
}

// writeSource writes size deterministic pseudo-random bytes (ChaCha8
// seeded with seed) to path, 1 MiB at a time, and returns their sha256.
func writeSource(path string, size int64, seed uint64) (string, error) {
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var s [32]byte
	binary.LittleEndian.PutUint64(s[:], seed)
	src := rand.NewChaCha8(s)
	h := sha256.New()
	buf := make([]byte, 1<<20)
	for left := size; left > 0; left -= int64(len(buf)) {
		b := buf[:min(left, int64(len(buf)))]
		src.Read(b)
		h.Write(b)
		if _, err := f.Write(b); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), f.Close()
}

// stageScript writes upload.mjs into a fresh folder inside the npm tools'
// folder, where its import of tus-js-client resolves.
func stageScript(nodeDir string) (string, func(), error) {
	dir, err := os.MkdirTemp(nodeDir, "cluster-tusjs-")
	if err != nil {
		return "", nil, err
	}
	path := filepath.Join(dir, "upload.mjs")
	if err := os.WriteFile(path, script, 0o644); err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return path, func() { os.RemoveAll(dir) }, nil
}

// npmVersion is the version field of an installed package's package.json.
func npmVersion(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var p struct{ Version string }
	err = json.Unmarshal(b, &p)
	return p.Version, err
}
