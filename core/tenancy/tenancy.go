package tenancy

import (
	"fmt"

	"github.com/mcpblob/mcpblob/core/auth"
	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/namespace"
)

// Mode is a tenancy mode.
type Mode int

// The modes of --tenancy.
const (
	Shared    Mode = iota // one namespace for every caller
	Principal             // a namespace per principal; admins see all
)

// ParseMode reads a --tenancy value.
func ParseMode(s string) (Mode, error) {
	switch s {
	case "shared":
		return Shared, nil
	case "principal":
		return Principal, nil
	}
	return Shared, fmt.Errorf("tenancy: %q is not principal or shared", s)
}

func (m Mode) String() string {
	if m == Principal {
		return "principal"
	}
	return "shared"
}

// AdminAudience is the event audience of blobs:admin callers in Principal
// mode: they see every change, in raw keys.
const AdminAudience = "admin"

// Policy applies a mode.
type Policy struct {
	Mode Mode
}

// confined reports whether id sees only its own namespace.
func (p Policy) confined(id auth.Identity) bool {
	return p.Mode == Principal && id.Principal != "" && !id.Admin()
}

// Store is b as id sees it.
func (p Policy) Store(b storage.Backend, id auth.Identity) storage.Backend {
	if p.confined(id) {
		return namespace.View(b, id.Principal)
	}
	return b
}

// Raw is the store key of id's key.
func (p Policy) Raw(id auth.Identity, key string) string {
	return p.RawPrefix(id) + key
}

// RawPrefix is the store prefix of id's keys ("" when id sees the raw store).
func (p Policy) RawPrefix(id auth.Identity) string {
	if p.confined(id) {
		return namespace.Join(namespace.Name(id.Principal), "")
	}
	return ""
}

// UploadTarget is what an upload endpoint minted for id stores under: the
// store key of id's key, or, when key is "" (the server picks the key when
// the file arrives), the store prefix of id's keys (token.Upload's Key and
// Prefix).
func (p Policy) UploadTarget(id auth.Identity, key string) (object, prefix string) {
	if key != "" {
		return p.Raw(id, key), ""
	}
	return "", p.RawPrefix(id)
}

// Audience is the event audience of id's notification streams.
func (p Policy) Audience(id auth.Identity) string {
	switch {
	case p.Mode != Principal:
		return ""
	case p.confined(id):
		return "ns:" + namespace.Name(id.Principal)
	}
	return AdminAudience
}

// Change is one announcement of a changed store key: Key as the audience
// knows it.
type Change struct {
	Key, Audience string
}

// Changes lists the announcements of a change to the store key raw.
func (p Policy) Changes(raw string) []Change {
	if p.Mode != Principal {
		return []Change{{Key: raw}}
	}
	if name, key, ok := namespace.Split(raw); ok {
		return []Change{{Key: key, Audience: "ns:" + name}, {Key: raw, Audience: AdminAudience}}
	}
	return []Change{{Key: raw, Audience: AdminAudience}}
}

// Local is the key a confined principal knows the store key raw by: raw
// without the principal's namespace prefix (raw itself when it is not in
// that namespace, as for an admin's keys).
func (p Policy) Local(principal, raw string) string {
	if p.Mode != Principal || principal == "" {
		return raw
	}
	if name, key, ok := namespace.Split(raw); ok && name == namespace.Name(principal) {
		return key
	}
	return raw
}
