package blobs

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"time"

	"github.com/mcpblob/mcpblob/core/files"
	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/token"
	"github.com/mcpblob/mcpblob/storage"
)

// TusOffset reads the durable offset of tus upload id started on the
// upload link whose upload id is nonce; ok is false when there is no such
// upload (never started, swept, completed and removed).
type TusOffset func(ctx context.Context, nonce, id string) (offset int64, ok bool)

// tusOn holds the reader of the upload links' tus offsets, set when the
// upload endpoints speak tus (SetTusOffset); nil without.
type tusOn = atomic.Pointer[TusOffset]

// SetTusOffset says the upload endpoints speak tus at <link>/tus/ and how
// to read an upload's offset: upload descriptors then carry the fork's
// resumable hint, and files/getUpload reports the bytes received.
func (a *App) SetTusOffset(f TusOffset) { a.tus.Store(&f) }

// linkFile is the SEP-2631 file whose bytes an upload link brings; ""
// for a link of another kind.
func linkFile(c token.Claims) string {
	var d UploadTokenData
	if len(c.Data) == 0 || json.Unmarshal(c.Data, &d) != nil {
		return ""
	}
	return d.File
}

// CheckLinkFile is CheckFileUpload for bytes a tus upload on link c stored
// (status 0 when they pass, or c is no file's link).
func (a *App) CheckLinkFile(c token.Claims, infos []storage.Info) (status int, code, msg string, err error) {
	if file := linkFile(c); file != "" {
		return a.CheckFileUpload(context.Background(), c.Principal, file, infos)
	}
	return 0, "", "", nil
}

// LinkTusStarted records that tus upload id was created on link c of a
// file: the file is uploading, and its descriptors and files/getUpload
// name that upload and its offset. Links of other kinds are left alone.
func (a *App) LinkTusStarted(c token.Claims, id string) {
	file := linkFile(c)
	if file == "" {
		return
	}
	_, err := a.files.Update(context.Background(), c.Principal, file, func(f *files.File) error {
		if f.State.Usable() {
			return errFileHasBytes
		}
		f.TusID, f.State, f.Reason = id, files.Uploading, ""
		return nil
	})
	if err != nil && !errors.Is(err, errFileHasBytes) {
		a.log.Debug("blobs: recording a file's tus upload", "file", file, "err", err)
	}
}

var errFileHasBytes = errors.New("blobs: the file has its bytes")

// received is how many bytes of f arrived: the stored size, or the
// offset of its tus upload in progress.
func (a *App) received(ctx context.Context, f *files.File) int64 {
	if f.Stored != nil {
		return f.Stored.Size
	}
	if tus := a.tus.Load(); tus != nil && f.TusID != "" {
		if off, ok := (*tus)(ctx, f.UploadID, f.TusID); ok {
			return off
		}
	}
	return 0
}

// resumableHint is the fork's resumable hint of a descriptor whose upload
// URL is url: tus at url + "/tus/" ("url"), the file's upload id, the
// bytes received, and once a tus upload started on the link, its URL
// ("uploadUrl") to HEAD and PATCH. Nil when the endpoints speak no tus or
// the bytes are there.
func (a *App) resumableHint(ctx context.Context, f *files.File, url string) mcp.Object {
	if a.tus.Load() == nil || f.State.Usable() {
		return nil
	}
	h := mcp.Object{"protocol": "tus", "url": url + "/tus/", "uploadId": f.ID, "receivedBytes": a.received(ctx, f)}
	if f.TusID != "" && f.State == files.Uploading {
		h["uploadUrl"] = url + "/tus/" + f.TusID
	}
	return h
}

// uploadExpiry is the expiry of a new upload link of f: the upload TTL
// from now. The record's expiry follows the latest link (the record is
// swept once no link can reach it), moved by at most a minute's
// granularity so that replays do not write it each time.
func (a *App) uploadExpiry(ctx context.Context, f *files.File) (time.Time, error) {
	exp := time.Now().Add(a.opts.UploadTTL).Truncate(time.Second)
	if !exp.After(f.Expires.Add(time.Minute)) {
		return f.Expires, nil
	}
	g, err := a.files.Update(ctx, f.Owner, f.ID, func(f *files.File) error {
		if exp.After(f.Expires) {
			f.Expires = exp
		}
		return nil
	})
	if err != nil {
		return time.Time{}, err
	}
	*f = *g
	return exp, nil
}

// SweepFiles removes the expired records of files whose bytes never
// arrived or were refused (files.Store.Sweep); the resumable uploads'
// periodic sweep runs it.
func (a *App) SweepFiles(ctx context.Context) (int, error) { return a.files.Sweep(ctx, time.Now()) }
