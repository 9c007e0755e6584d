package tus

import (
	"context"
	"errors"
	"strings"

	"github.com/mcpblob/mcpblob/storage"
)

// Sweep removes the uploads that expired (complete or not) and reports
// how many. Any node may sweep at any time, several at once: an upload is
// first marked expired by compare-and-swap, so a PATCH that commits
// meanwhile makes the mark fail and the upload lives on (its commit
// extended its expiry), and an upload marked expired is refused (410)
// before it is removed.
func (h *Handler) Sweep(ctx context.Context) (int, error) {
	var ids []string
	err := h.rec.ListRecords(ctx, h.prefix, func(name string) bool {
		if id, ok := strings.CutSuffix(strings.TrimPrefix(name, h.prefix+"/"), "/info"); ok && ValidID(id) {
			ids = append(ids, id)
		}
		return true
	})
	if err != nil {
		return 0, err
	}
	removed := 0
	for _, id := range ids {
		ok, err := h.sweepOne(ctx, id)
		if err != nil {
			return removed, err
		}
		if ok {
			removed++
		}
	}
	return removed, nil
}

func (h *Handler) sweepOne(ctx context.Context, id string) (bool, error) {
	u, err := h.load(ctx, id)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return false, nil
	case err != nil:
		return false, err
	case h.Now().Before(u.Expires):
		return false, nil
	}
	u.Expired = true
	switch err := h.save(ctx, u); {
	case errors.Is(err, storage.ErrPreconditionFailed):
		return false, nil // changed since read: not ours to judge now
	case err != nil:
		return false, err
	}
	return true, h.remove(ctx, u)
}
