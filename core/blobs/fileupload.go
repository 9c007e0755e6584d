package blobs

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/mcpblob/mcpblob/core/files"
	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/storage"
)

// FileUploadError is an upload to a file's endpoint whose bytes break what
// the client pinned (size, digest): the bytes were deleted before the
// answer, and the link may be used again with the right ones. Reason is
// the files/* data.reason ("digestMismatch", "sizeMismatch",
// "maxSizeExceeded").
type FileUploadError struct {
	Reason, Msg string
}

func (e *FileUploadError) Error() string { return "blobs: " + e.Msg }

// FileUploaded is called by the upload endpoint after it stored the bytes
// of file id (its token's Data names the file): it checks them against the
// file's pins and records them, so the file can be used, or deletes them
// and records the failure. A *FileUploadError is the client's fault; any
// other error the server's.
func (a *App) FileUploaded(ctx context.Context, principal, id string, infos []storage.Info) error {
	if len(infos) != 1 {
		a.dropFileBytes(ctx, infos)
		return &FileUploadError{Reason: "oneFile", Msg: "a file upload takes exactly one file"}
	}
	info := infos[0]
	st := files.Stored{Size: info.Size, SHA256: info.SHA256, ETag: info.ETag, MediaType: info.MediaType}
	var reason string
	_, err := a.files.Update(ctx, principal, id, func(f *files.File) error {
		if f.Key != info.Key {
			return fmt.Errorf("blobs: file %s: bytes stored under another key", id)
		}
		if reason = f.Check(st); reason != "" {
			f.State, f.Reason = files.Failed, reason
			return nil
		}
		f.State, f.Reason, f.Stored = files.Uploaded, "", &st
		return nil
	})
	if err != nil || reason != "" {
		a.dropFileBytes(ctx, infos)
	}
	if err != nil {
		return err
	}
	if reason != "" {
		return &FileUploadError{Reason: reason, Msg: fileReasonText(reason)}
	}
	a.Changed(info.Key)
	return nil
}

// CheckFileUpload is FileUploaded as the upload endpoint answers it: a
// refusal is a status (400 for bytes that break a pin, 500 for the
// server's fault), an error code ("digest_mismatch") and a message.
func (a *App) CheckFileUpload(ctx context.Context, principal, id string, infos []storage.Info) (status int, code, msg string, err error) {
	err = a.FileUploaded(ctx, principal, id, infos)
	var fe *FileUploadError
	switch {
	case errors.As(err, &fe):
		return http.StatusBadRequest, snakeCase(fe.Reason), fe.Msg, err
	case err != nil:
		return http.StatusInternalServerError, "internal", "the upload could not be recorded", err
	}
	return 0, "", "", nil
}

// snakeCase is a files/* reason ("digestMismatch") as the error codes of
// the HTTP surfaces spell them ("digest_mismatch").
func snakeCase(s string) string {
	var b strings.Builder
	for _, r := range s {
		if 'A' <= r && r <= 'Z' {
			b.WriteByte('_')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

func fileReasonText(reason string) string {
	switch reason {
	case "digestMismatch":
		return "the bytes' sha-256 does not match the digest given when the upload was authorized; nothing was kept"
	case "sizeMismatch":
		return "the bytes' size does not match the size given when the upload was authorized; nothing was kept"
	}
	return "the file is larger than the upload allows; nothing was kept"
}

// dropFileBytes deletes bytes an upload stored that the file refused.
func (a *App) dropFileBytes(ctx context.Context, infos []storage.Info) {
	for _, info := range infos {
		if err := a.backend.Delete(context.WithoutCancel(ctx), info.Key); err != nil && !errors.Is(err, storage.ErrNotFound) {
			a.log.Error("blobs: delete refused file bytes", "key", info.Key, "err", err)
		}
	}
}

// fileNotUploaded is the FileError reason of a file URI whose bytes have
// not arrived.
const fileNotUploaded = "the file's bytes have not been uploaded yet"

// OpenFileURI opens an mcp-file URI given as an x-mcp-file value
// (mcp.Options.OpenFileURI): the caller's own file, uploaded, whose stored
// bytes are still the version that was verified.
func (a *App) OpenFileURI(u mcp.FileURI) (*mcp.FileSource, error) {
	server, id, err := files.ParseURI(u.URI)
	if err != nil || server != a.fileServer {
		return nil, &mcp.FileError{Arg: u.Argument, Reason: "not a file URI of this server"}
	}
	f, err := a.files.Get(u.Ctx, u.Principal, id)
	switch {
	case errors.Is(err, files.ErrNotFound):
		return nil, &mcp.FileError{Arg: u.Argument, Reason: "no such file (a file URI is its uploader's only)"}
	case err != nil:
		return nil, err
	case f.State == files.Failed:
		return nil, &mcp.FileError{Arg: u.Argument, Reason: "the file's upload failed (" + f.Reason + ")"}
	case !f.State.Usable():
		return nil, &mcp.FileError{Arg: u.Argument, Reason: fileNotUploaded}
	}
	body, info, err := a.backend.Open(u.Ctx, f.Key, nil)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, &mcp.FileError{Arg: u.Argument, Reason: "the file's bytes are gone"}
	}
	if err != nil {
		return nil, err
	}
	if info.ETag != f.Stored.ETag {
		_ = body.Close()
		return nil, &mcp.FileError{Arg: u.Argument, Reason: "the file's bytes changed since they were uploaded"}
	}
	return &mcp.FileSource{MediaType: mediaType(info), Size: info.Size, Body: body}, nil
}

// filesDone checks the bytes an upload endpoint stored under a file's key
// whose state does not record them yet: they came another way than the
// PUT and tus on the file's upload link, which check them before.
// As FileUploaded does, it records them or deletes them and fails the
// file; the reason is then in files/getUpload and files/completeUpload.
func (a *App) filesDone(infos []storage.Info) {
	ctx := context.Background()
	for _, info := range infos {
		i := strings.LastIndex(info.Key, FilePrefix)
		if i < 0 || i > 0 && info.Key[i-1] != '/' {
			continue
		}
		f, err := a.files.Lookup(ctx, info.Key[i+len(FilePrefix):])
		if err != nil || f.Key != info.Key || f.State.Usable() {
			continue
		}
		if err := a.FileUploaded(ctx, f.Owner, f.ID, []storage.Info{info}); err != nil {
			a.log.Debug("blobs: file bytes refused", "file", f.ID, "err", err)
		}
	}
}
