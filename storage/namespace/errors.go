package namespace

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mcpblob/mcpblob/storage"
)

// viewError is a backend error retold in the caller's keys: msg is the
// backend's text without the raw prefix, errs the rewritten key error (when
// there is one) and then the backend's error, so that errors.As finds the
// rewritten one first and errors.Is everything the backend's error wraps.
type viewError struct {
	msg  string
	errs []error
}

func (e *viewError) Error() string   { return e.msg }
func (e *viewError) Unwrap() []error { return e.errs }

// fix retells err, from an operation on the caller's key (or List prefix)
// subject, in the caller's keys. It returns err itself when it names no raw
// key, and nil for nil.
func (v *view) fix(err error, subject string) error {
	if err == nil {
		return nil
	}
	var pe *storage.PathConflictError
	if errors.As(err, &pe) {
		return v.fixConflict(err, pe, subject)
	}
	text := err.Error()
	errs := []error{err}
	var ke *storage.KeyError
	if errors.As(err, &ke) {
		mine := &storage.KeyError{Key: v.key(ke.Key, subject), Reason: ke.Reason, Err: ke.Err}
		text = strings.ReplaceAll(text, ke.Error(), mine.Error())
		errs = []error{mine, err}
	}
	text = v.scrub(text, subject)
	if len(errs) == 1 && text == err.Error() {
		return err
	}
	return &viewError{msg: text, errs: errs}
}

// fixConflict retells a path conflict. A Conflict outside the namespace
// (a root object ".ns" or ".ns/<name>" in the way of the whole namespace)
// is not the caller's to see: the error is then a bare ErrPathConflict.
func (v *view) fixConflict(err error, pe *storage.PathConflictError, subject string) error {
	conflict, ok := strings.CutPrefix(pe.Conflict, v.prefix)
	if !ok || conflict == "" {
		msg := fmt.Sprintf("namespace: %q: %v: the namespace's folder is blocked", storage.TruncateKey(subject), storage.ErrPathConflict)
		return &viewError{msg: msg, errs: []error{storage.ErrPathConflict}}
	}
	mine := &storage.PathConflictError{Key: v.key(pe.Key, subject), Conflict: conflict}
	text := strings.ReplaceAll(err.Error(), pe.Error(), mine.Error())
	return &viewError{msg: v.scrub(text, subject), errs: []error{mine, err}}
}

// key returns the caller's form of a raw key from an error: stripped of the
// prefix, "" when the error named none, else the operation's subject.
func (v *view) key(raw, subject string) string {
	if raw == "" {
		return ""
	}
	if key, ok := strings.CutPrefix(raw, v.prefix); ok {
		return key
	}
	return subject
}

// scrub takes the raw prefix out of an error text. Every raw form of the
// namespace's folder goes, and then every trace of a namespace folder in
// whatever encoding the backend wrote it (an HTTP client's error quotes the
// URL: ".ns/%3Dab…/k" or "prefix=.ns%2Falice%2F") — unless the caller's own
// key has a ".ns" in it: what is left is then the caller's (or at worst the
// caller's own namespace name).
func (v *view) scrub(text, subject string) string {
	if strings.Contains(subject, v.prefix) {
		text = strings.ReplaceAll(text, v.prefix+subject, subject)
	} else {
		text = strings.ReplaceAll(text, v.prefix, "")
	}
	if strings.Contains(subject, Root) {
		return text
	}
	for _, sep := range []string{"/", "%2F", "%2f"} {
		text = stripFolders(text, Root+sep, sep)
	}
	return text
}

// stripFolders removes every start (".ns/") from s together with the name
// after it, up to and including the next sep; a quote, space or the end of
// s before any sep ends the name instead (a truncated key).
func stripFolders(s, start, sep string) string {
	if !strings.Contains(s, start) {
		return s
	}
	var b strings.Builder
	for {
		before, after, found := strings.Cut(s, start)
		b.WriteString(before)
		if !found {
			return b.String()
		}
		end := strings.IndexAny(after, "\"' ")
		if i := strings.Index(after, sep); i >= 0 && (end < 0 || i < end) {
			end = i + len(sep)
		} else if end < 0 {
			end = len(after)
		}
		s = after[end:]
	}
}
