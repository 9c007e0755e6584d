package tus

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcpblob/mcpblob/storage"
)

// Upload is the state of one upload, kept as a storage record (its info)
// and replaced by compare-and-swap on every change: whoever changes it
// names the version it read, so of two writers only one succeeds.
type Upload struct {
	ID       string            `json:"id"`
	Owner    string            `json:"owner"`
	Length   int64             `json:"length"` // -1 while deferred
	Offset   int64             `json:"offset"` // durable bytes
	Metadata map[string]string `json:"metadata,omitempty"`
	// RawMetadata is Upload-Metadata as the client sent it, echoed by HEAD.
	RawMetadata string    `json:"rawMetadata,omitempty"`
	Segments    []Segment `json:"segments,omitempty"`
	Expires     time.Time `json:"expires"`
	Partial     bool      `json:"partial,omitempty"`
	Parts       []string  `json:"parts,omitempty"`   // a final upload's partial uploads
	Done        bool      `json:"done,omitempty"`    // completed and stored
	Expired     bool      `json:"expired,omitempty"` // being swept
	Result      string    `json:"result,omitempty"`
	// Staged is the staged write (storage.Stager) holding the bytes, ""
	// for an upload kept in segment records (a partial upload of a
	// concatenation, or a store without staged writes).
	Staged string `json:"staged,omitempty"`
	// NextPart is the next staged part number free to take; a request
	// takes numbers by compare-and-swap before it writes them.
	NextPart int `json:"nextPart,omitempty"`
	// Taker is a random token of the request that last took part numbers,
	// so that a write whose answer was lost knows it landed.
	Taker string `json:"taker,omitempty"`
	// Hash is the SHA-256 state of the durable bytes of a staged upload
	// (encoding.BinaryMarshaler), of all of them or (a store that reads
	// staged bytes back) of a prefix, whose length the state holds
	// (hashedLen); Head is their first bytes (up to HeadLen), so
	// completion needs no second pass over the bytes.
	Hash []byte `json:"hash,omitempty"`
	Head []byte `json:"head,omitempty"`
	// Rev counts writes, so every write's bytes differ (S3's version is
	// the bytes' MD5).
	Rev int64 `json:"rev"`

	version string // of the record read
	// cached: read from this node's copy (recentUploads), which may be
	// stale, not from the store.
	cached bool
}

// Segment holds bytes of the upload, in order: a record (Name), or a
// part of the upload's staged write (Part). A staged upload's segments are
// parts, then at most one record: a tail shorter than the store's part
// minimum, merged into the next part.
type Segment struct {
	Name string              `json:"name,omitempty"`
	Size int64               `json:"size"`
	Part *storage.StagedPart `json:"part,omitempty"`
}

// HeadLen is how many first bytes a staged upload keeps for sniffing.
const HeadLen = 512

// stagedParts returns the parts of segs.
func stagedParts(segs []Segment) []storage.StagedPart {
	var parts []storage.StagedPart
	for _, s := range segs {
		if s.Part != nil {
			parts = append(parts, *s.Part)
		}
	}
	return parts
}

// Final reports whether u is a final upload of a concatenation.
func (u *Upload) Final() bool { return len(u.Parts) > 0 }

// complete reports whether every byte arrived.
func (u *Upload) complete() bool { return u.Length >= 0 && u.Offset == u.Length }

func (h *Handler) infoName(id string) string { return h.prefix + "/" + id + "/info" }

func (h *Handler) segmentName(id string) string {
	return h.prefix + "/" + id + "/s" + rand.Text()
}

// load reads an upload's record; a missing one gives ErrNotFound.
func (h *Handler) load(ctx context.Context, id string) (*Upload, error) {
	data, v, err := h.rec.GetRecord(ctx, h.infoName(id))
	if err != nil {
		return nil, err
	}
	u := new(Upload)
	if err := json.Unmarshal(data, u); err != nil {
		return nil, fmt.Errorf("tus: upload %s: damaged record: %w", id, err)
	}
	u.version = v
	return u, nil
}

// save writes u under the version it was read with ("" creates it); a
// lost race gives storage.ErrPreconditionFailed. On success u carries the
// new version.
func (h *Handler) save(ctx context.Context, u *Upload) error {
	u.Rev++
	data, err := json.Marshal(u)
	if err != nil {
		return err
	}
	v, err := h.rec.PutRecord(ctx, h.infoName(u.ID), data, u.version)
	if err != nil {
		return err
	}
	u.version = v
	return nil
}

// remove deletes an upload's segments, those its record names and any a
// request wrote and did not commit (a node stopped in between), then its
// record.
func (h *Handler) remove(ctx context.Context, u *Upload) error {
	segs := u.Segments
	err := h.rec.ListRecords(ctx, h.prefix+"/"+u.ID, func(name string) bool {
		if name != h.infoName(u.ID) {
			segs = append(segs, Segment{Name: name})
		}
		return true
	})
	if err != nil {
		return err
	}
	if err := h.dropSegments(ctx, segs); err != nil {
		return err
	}
	if u.Staged != "" && !u.Done && h.Stager != nil {
		if err := h.Stager.AbortStaged(ctx, u.Staged); err != nil {
			return err
		}
	}
	return h.rec.DeleteRecord(ctx, h.infoName(u.ID))
}

// dropSegments deletes the records of segs (parts go with their staged
// write).
func (h *Handler) dropSegments(ctx context.Context, segs []Segment) error {
	var errs []error
	for _, s := range segs {
		if s.Name != "" {
			errs = append(errs, h.rec.DeleteRecord(ctx, s.Name))
		}
	}
	return errors.Join(errs...)
}
