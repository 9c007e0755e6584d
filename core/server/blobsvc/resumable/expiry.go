package resumable

import (
	"net/http"
	"strconv"
	"time"

	"github.com/mcpblob/mcpblob/core/tus"
	"github.com/mcpblob/mcpblob/storage"
)

// ExpiresMeta is the upload state's metadata entry (not the client's)
// holding the blob's expiry in Unix milliseconds, fixed when the upload
// is created so that its staged write's start and its commit agree. A
// client naming it in Upload-Metadata is refused.
const ExpiresMeta = "mcpblob-expires-ms"

// tusExpiry reads ttlSeconds from u's Upload-Metadata and fixes the
// blob's expiry in u (counted from the creation); an upload without it
// has none. A bad value is refused with 400 invalid_ttl.
func tusExpiry(u *tus.Upload) *tus.Error {
	if _, set := u.Metadata[ExpiresMeta]; set {
		return &tus.Error{Status: http.StatusBadRequest, Code: "bad_metadata",
			Message: "Upload-Metadata " + ExpiresMeta + " is the server's own; give ttlSeconds"}
	}
	v, set := u.Metadata["ttlSeconds"]
	if !set {
		return nil
	}
	ttl, err := storage.ParseTTL(v)
	if err != nil {
		return &tus.Error{Status: http.StatusBadRequest, Code: "invalid_ttl", Message: "Upload-Metadata " + err.Error()}
	}
	StampExpiry(u, ttl, time.Now())
	return nil
}

// StampExpiry fixes in u the expiry of its blob: ttl after now (none for
// ttl 0).
func StampExpiry(u *tus.Upload, ttl time.Duration, now time.Time) {
	if ttl <= 0 {
		return
	}
	if u.Metadata == nil {
		u.Metadata = map[string]string{}
	}
	u.Metadata[ExpiresMeta] = strconv.FormatInt(storage.Expiry(now, ttl).UnixMilli(), 10)
}

// ExpiryOf is the expiry StampExpiry fixed in u, zero for none.
func ExpiryOf(u *tus.Upload) time.Time {
	ms, err := strconv.ParseInt(u.Metadata[ExpiresMeta], 10, 64)
	if err != nil || ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}
