package storage

import "context"

// StagedReader is a Stager that reads back the bytes of a staged write
// (the local store's file): ReadStaged reads len(p) bytes at offset as
// io.ReaderAt does, bytes a part durable or written before holds. A tus
// upload hashes with it what it did not hash while the bytes arrived.
type StagedReader interface {
	ReadStaged(ctx context.Context, id string, offset int64, p []byte) (int, error)
}

// StagedReaderOf returns st's StagedReader: st itself, or what a wrapper
// gives through a StagedReader method; nil when it has none.
func StagedReaderOf(st Stager) StagedReader {
	switch s := st.(type) {
	case interface{ StagedReader() StagedReader }:
		return s.StagedReader()
	case StagedReader:
		return s
	}
	return nil
}
