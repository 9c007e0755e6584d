package main

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/mcpblob/mcpblob/core/token"
	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/wire"
)

// principals are the API-key holders the hostile inputs use; alice is the
// one every surface is driven as, bob is the wrong principal (and the
// second principal the state exhaustion class keeps serving).
var principals = []string{"alice", "bob"}

// keyHolders are every API key the server knows: its name in apiKeys, its
// principal and its scopes ("" = the keys file's default, read and write).
// mallory is the state exhaustion class's one principal: a key with
// blobs:read only, and mallory+write, the same principal with blobs:write
// (for the one phase whose tool needs it, and to store her blob).
var keyHolders = []struct{ name, principal, scopes string }{
	{"alice", "alice", ""}, {"bob", "bob", ""}, {attacker, "mallory", "read"}, {attackerWriter, "mallory", "read,write"},
}

const (
	attacker       = "mallory"
	attackerWriter = "mallory+write"
)

// windowLen is the prefix length secrets are indexed by; shorter values
// are never registered (they would match by chance).
const windowLen = 16

// secrets are the values that must never appear in the server's logs: the
// API keys, the token key, the signatures (or sealed boxes) of every token
// the server minted for the harness, presigned signatures and the payload
// markers of the data URIs the harness sent. It also writes the key files
// the server starts with.
type secrets struct {
	apiKeys       map[string]string // principal → bearer key
	authKeysPath  string
	tokenKeysPath string
	keyring       *token.Keyring // the server's token keys, to sign hostile claims

	mu    sync.Mutex
	kinds []string       // kinds[i] names values[i]
	vals  []string       // registered values
	index map[string]int // first windowLen bytes → index (last wins)
	seen  map[string]bool
}

func newSecrets(work string) (*secrets, error) {
	s := &secrets{apiKeys: map[string]string{}, index: map[string]int{}, seen: map[string]bool{}}
	var lines strings.Builder
	for _, h := range keyHolders {
		key := "mcpb_" + rand.Text() + rand.Text()
		s.apiKeys[h.name] = key
		s.Add("API key of "+h.name, key)
		d := sha256.Sum256([]byte(key))
		fmt.Fprintf(&lines, "%s %s", hex.EncodeToString(d[:]), h.principal)
		if h.scopes != "" {
			fmt.Fprintf(&lines, " scopes=%s", h.scopes)
		}
		lines.WriteString("\n")
	}
	s.authKeysPath = filepath.Join(work, "api-keys")
	if err := os.WriteFile(s.authKeysPath, []byte(lines.String()), 0o600); err != nil {
		return nil, err
	}
	secret := make([]byte, 32)
	rand.Read(secret)
	enc := base64.RawURLEncoding.EncodeToString(secret)
	s.Add("token key", enc)
	s.tokenKeysPath = filepath.Join(work, "token-keys")
	if err := os.WriteFile(s.tokenKeysPath, []byte("hard1 "+enc+"\n"), 0o600); err != nil {
		return nil, err
	}
	kr, err := token.NewKeyring(token.Key{ID: "hard1", Secret: secret})
	if err != nil {
		return nil, err
	}
	s.keyring = kr
	return s, nil
}

// Add registers a value; values shorter than windowLen are ignored.
func (s *secrets) Add(kind, v string) {
	if len(v) < windowLen {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen[v] {
		return
	}
	s.seen[v] = true
	s.index[v[:windowLen]] = len(s.vals)
	s.kinds = append(s.kinds, kind)
	s.vals = append(s.vals, v)
}

// AddToken registers a minted token's signature: the part after its last
// '.' (the HMAC of a signed token, the sealed box of a sealed one). Access
// logs may show a token's first characters by design; never this part.
func (s *secrets) AddToken(kind, tok string) {
	if i := strings.LastIndexByte(tok, '.'); i >= 0 {
		s.Add(kind, tok[i+1:])
	}
}

// Marker returns a fresh payload marker: 24 characters that are valid
// base64 and plain text at once, registered as a secret.
func (s *secrets) Marker() string {
	m := "HrdMk" + strings.ToUpper(rand.Text())[:19]
	s.Add("data URI payload", m)
	return m
}

// hit is one log line holding a secret, with the secret blanked out.
type hit struct{ kind, line string }

// scan returns every line of text holding a registered secret.
func (s *secrets) scan(text []byte) []hit {
	s.mu.Lock()
	defer s.mu.Unlock()
	var hits []hit
	lastLine := -1
	for i := 0; i+windowLen <= len(text); i++ {
		j, ok := s.index[string(text[i:i+windowLen])]
		if !ok || !bytes.HasPrefix(text[i:], []byte(s.vals[j])) {
			continue
		}
		start, end := lineAt(text, i)
		if start == lastLine {
			continue
		}
		lastLine = start
		line := strings.ReplaceAll(string(text[start:end]), s.vals[j], "<"+s.kinds[j]+">")
		hits = append(hits, hit{s.kinds[j], wire.Clip(line, 240)})
	}
	return hits
}
