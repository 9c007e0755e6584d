package quota

import (
	"context"
	"fmt"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/namespace"
)

// Rebuild recomputes every namespace's usage from the objects of b (the
// raw store, not wrapped) and writes it into l's records, keeping their
// reservations; records of namespaces that hold no object any more are
// set to zero. It is meant for a store no server writes to meanwhile
// (`mcpblob usage --rebuild`). It returns the usage it wrote.
func Rebuild(ctx context.Context, b storage.Backend, l *Ledger) (map[string]Usage, error) {
	truth, err := Scan(ctx, b)
	if err != nil {
		return nil, err
	}
	stale, err := l.namespaces(ctx)
	if err != nil {
		return nil, err
	}
	for _, ns := range stale {
		if _, ok := truth[ns]; !ok {
			truth[ns] = Usage{}
		}
	}
	for ns, u := range truth {
		err := l.update(ctx, ns, func(r *record) error {
			r.Bytes, r.Objects = u.Bytes, u.Objects
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return truth, nil
}

// Scan sums the objects of b's namespaces.
func Scan(ctx context.Context, b storage.Backend) (map[string]Usage, error) {
	truth := map[string]Usage{}
	cursor := ""
	for {
		page, err := b.List(ctx, namespace.Prefix, cursor, 1000)
		if err != nil {
			return nil, fmt.Errorf("quota: listing the namespaces: %w", err)
		}
		for _, info := range page.Items {
			if ns, _, ok := namespace.Split(info.Key); ok {
				u := truth[ns]
				u.Bytes += info.Size
				u.Objects++
				truth[ns] = u
			}
		}
		if page.NextCursor == "" {
			return truth, nil
		}
		cursor = page.NextCursor
	}
}

// namespaces lists the namespaces that have a usage record.
func (l *Ledger) namespaces(ctx context.Context) ([]string, error) {
	var names []string
	err := l.Records.ListRecords(ctx, RecordDir, func(name string) bool {
		names = append(names, name)
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("quota: listing the usage records: %w", err)
	}
	var out []string
	for _, name := range names {
		data, _, err := l.Records.GetRecord(ctx, name)
		if err != nil {
			continue // deleted meanwhile
		}
		if ns := nsOf(data); ns != "" {
			out = append(out, ns)
		}
	}
	return out, nil
}

// All returns the usage of every namespace that has a record.
func (l *Ledger) All(ctx context.Context) (map[string]Usage, error) {
	names, err := l.namespaces(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Usage, len(names))
	for _, ns := range names {
		if out[ns], err = l.Usage(ctx, ns); err != nil {
			return nil, err
		}
	}
	return out, nil
}
