package blobdecode

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"strconv"
)

// Freshness is what a resources/read answer says about how long its
// content may be kept and which version it is (the gateway's stream cache
// records it): the 2026-07-28 result's ttlMs and cacheScope, and the first
// content's annotations.lastModified and _meta.
type Freshness struct {
	// TTLGiven reports a result.ttlMs (a non-negative integer); TTLMs is
	// its value then.
	TTLGiven bool
	TTLMs    int64
	// CacheScope is result.cacheScope ("public", "private"; "" when not
	// given).
	CacheScope string
	// LastModified is the first content's annotations.lastModified.
	LastModified string
	// MetaSHA256 is the hex sha256 of the first content's _meta as sent
	// (its JSON bytes, whitespace included); "" when not given.
	MetaSHA256 string
}

// resultFreshness reads result member key when it is one of Freshness's;
// it reports false for any other key.
func (d *decoder) resultFreshness(r *reader, key string) (bool, error) {
	switch key {
	case "ttlMs":
		if c, err := r.skipWS(); err != nil {
			return true, err
		} else if c == '"' || c == '{' || c == '[' {
			return true, r.skip(2) // not a number: no hint
		}
		lit, err := r.literal()
		if n, perr := strconv.ParseInt(lit, 10, 64); err == nil && perr == nil && n >= 0 {
			d.res.TTLGiven, d.res.TTLMs = true, n
		}
		return true, err
	case "cacheScope":
		if c, err := r.skipWS(); err != nil || c != '"' {
			return true, orSkip(r, err, 2)
		}
		r.lo++
		v, err := r.smallString(d.opts.MaxStringBytes, true)
		d.res.CacheScope = v
		return true, err
	}
	return false, nil
}

// contentFreshness reads content member key when it is _meta or
// annotations; it reports false for any other key.
func (d *decoder) contentFreshness(r *reader, key string) (bool, error) {
	switch key {
	case "_meta":
		h := sha256.New()
		if err := r.skipTeed(h, 4); err != nil {
			return true, err
		}
		d.res.MetaSHA256 = hex.EncodeToString(h.Sum(nil))
		return true, nil
	case "annotations":
		if c, err := r.skipWS(); err != nil || c != '{' {
			return true, orSkip(r, err, 4)
		}
		return true, r.object(d.opts.MaxStringBytes, func(k string) error {
			if c, err := r.skipWS(); err != nil || k != "lastModified" || c != '"' {
				return orSkip(r, err, 5)
			}
			r.lo++
			v, err := r.smallString(d.opts.MaxStringBytes, true)
			d.res.LastModified = v
			return err
		})
	}
	return false, nil
}

// orSkip is err, or the skip of the value that comes next.
func orSkip(r *reader, err error, depth int) error {
	if err != nil {
		return err
	}
	return r.skip(depth)
}

// skipTeed skips the value that comes next, its bytes also written to w.
func (r *reader) skipTeed(w io.Writer, depth int) error {
	if _, err := r.skipWS(); err != nil {
		return err
	}
	prev := r.tee
	if prev != nil {
		w = io.MultiWriter(prev, w)
	}
	r.setTee(w)
	err := r.skip(depth)
	r.setTee(prev)
	return err
}
