package namespace

import (
	"context"

	"github.com/mcpblob/mcpblob/storage"
)

// Stager returns the view's staged writes (storage.StagerOf finds it), or
// nil when the backend has none. BeginStaged takes the caller's key; the
// id it returns is the backend's, for the raw key, and the other methods
// pass it through: ids are the server's own (kept in its records), never a
// caller's input, so they need no confining. CommitStaged's Info and
// errors speak in the caller's key.
func (v *view) Stager() storage.Stager {
	s := storage.StagerOf(v.b)
	if s == nil {
		return nil
	}
	return stagerView{v: v, s: s}
}

type stagerView struct {
	v *view
	s storage.Stager
}

func (s stagerView) BeginStaged(ctx context.Context, key string, opts storage.CreateOptions) (string, error) {
	raw, err := s.v.raw(key)
	if err != nil {
		return "", err
	}
	id, err := s.s.BeginStaged(ctx, raw, opts)
	return id, s.v.fix(err, key)
}

func (s stagerView) PutStaged(ctx context.Context, id string, number int, offset int64, data []byte) (storage.StagedPart, error) {
	p, err := s.s.PutStaged(ctx, id, number, offset, data)
	return p, s.v.fix(err, "")
}

func (s stagerView) StagedPartMin() int { return s.s.StagedPartMin() }

func (s stagerView) CommitStaged(ctx context.Context, id string, parts []storage.StagedPart, opts storage.CreateOptions, sha string) (storage.Info, error) {
	info, err := s.s.CommitStaged(ctx, id, parts, opts, sha)
	if err != nil {
		return storage.Info{}, s.v.fix(err, "")
	}
	return s.v.info(info), nil
}

func (s stagerView) AbortStaged(ctx context.Context, id string) error {
	return s.v.fix(s.s.AbortStaged(ctx, id), "")
}

// StagedStreamer, StagedSender, StagedClaimer and StagedReader give the backend's own
// fast paths (nil when it has none): their ids are the backend's, as
// above, and they name no key.
func (s stagerView) StagedStreamer() storage.StagedStreamer { return storage.StreamerOf(s.s) }

func (s stagerView) StagedSender() storage.StagedSender { return storage.SenderOf(s.s) }

func (s stagerView) StagedClaimer() storage.StagedClaimer { return storage.ClaimerOf(s.s) }

func (s stagerView) StagedReader() storage.StagedReader { return storage.StagedReaderOf(s.s) }
