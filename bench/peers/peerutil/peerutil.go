// Package peerutil holds what the peer servers share: their flags, the blob
// files they serve, and the data-URI tool body, written the way an SDK user
// would write them (whole values in memory, encoding/base64).
package peerutil

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Flags are the command line of every peer server.
type Flags struct {
	Listen string // loopback address to serve on
	Dir    string // every regular file in Dir is served as blob:///{name}
	Out    string // upload_file writes decoded files here ("" = discard)
}

// Parse reads the peer flags from args.
func Parse(name string, args []string) (Flags, error) {
	var f Flags
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.StringVar(&f.Listen, "listen", "127.0.0.1:0", "loopback `address` to listen on")
	fs.StringVar(&f.Dir, "dir", "", "`folder` whose files are served as blob:///{name}")
	fs.StringVar(&f.Out, "out", "", "`folder` for files received by upload_file (empty: discard)")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	if f.Dir == "" {
		return f, errors.New("-dir is required")
	}
	return f, nil
}

// Blobs lists the files of dir as key → path.
func Blobs(dir string) (map[string]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	m := make(map[string]string)
	for _, e := range ents {
		if e.Type().IsRegular() {
			m[e.Name()] = filepath.Join(dir, e.Name())
		}
	}
	return m, nil
}

// Upload is the result of the upload_file tool.
type Upload struct {
	Size   int    `json:"size"`
	SHA256 string `json:"sha256"`
}

// SaveDataURI decodes an RFC 2397 base64 data URI and stores the bytes
// (under out/name when out is set).
func SaveDataURI(out, name, uri string) (Upload, error) {
	rest, ok := strings.CutPrefix(uri, "data:")
	if !ok {
		return Upload{}, errors.New("not a data URI")
	}
	header, payload, ok := strings.Cut(rest, ",")
	if !ok || !strings.HasSuffix(header, ";base64") {
		return Upload{}, errors.New("not a base64 data URI")
	}
	raw, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return Upload{}, fmt.Errorf("decode: %w", err)
	}
	sum := sha256.Sum256(raw)
	if out != "" {
		if name == "" {
			name = "upload"
		}
		if err := os.WriteFile(filepath.Join(out, filepath.Base(name)), raw, 0o644); err != nil {
			return Upload{}, err
		}
	}
	return Upload{Size: len(raw), SHA256: hex.EncodeToString(sum[:])}, nil
}
