package main

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/mcpblob/mcpblob/core/token"
	"github.com/mcpblob/mcpblob/storage"
)

// Token keys file format: one key per line, "<id> <base64url secret>"; the
// last line is the newest key and signs, every line verifies. Blank lines and
// '#' comments are ignored. To rotate, append a line (mcpblob keeps verifying
// tokens signed with the older keys) and drop old lines after the longest
// token lifetime has passed.

// localKeysFile is where the local store keeps its generated keys: inside the
// store's reserved folder, which no blob key can address.
func localKeysFile(dataDir string) string {
	return filepath.Join(dataDir, storage.ReservedDir, "token-keys")
}

// loadKeyring reads the keys from the environment (MCPBLOB_TOKEN_KEYS_DATA,
// the keys file's text, for secrets injected as variables) or cfg.TokenKeys;
// without either, the local store generates a key file on first start and
// reuses it, and an S3 node (which has no private folder) uses a random
// per-process key with a warning.
func loadKeyring(cfg Config, logger *slog.Logger) (*token.Keyring, error) {
	if cfg.TokenKeysData != "" {
		keys, err := token.ParseKeys([]byte(cfg.TokenKeysData))
		if err != nil {
			return nil, fmt.Errorf("MCPBLOB_TOKEN_KEYS_DATA: %w", err)
		}
		return token.NewKeyring(keys...)
	}
	path := cfg.TokenKeys
	if path == "" && cfg.S3Endpoint == "" {
		path = localKeysFile(cfg.Data)
		if err := generateKeysFile(path); err != nil {
			return nil, err
		}
	}
	if path == "" {
		logger.Warn("no --token-keys: signing with a random per-process key; links and sessions will not verify on other nodes or after a restart")
		return token.NewRandomKeyring(), nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("token keys: %w", err)
	}
	keys, err := token.ParseKeys(raw)
	if err != nil {
		return nil, fmt.Errorf("token keys %s: %w", path, err)
	}
	return token.NewKeyring(keys...)
}

// generateKeysFile writes a file with one fresh key, unless one exists.
func generateKeysFile(path string) error {
	if _, err := os.Stat(path); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("token keys: %w", err)
	}
	k := token.NewKey(time.Now().UTC().Format("20060102T150405"))
	line := "# mcpblob token keys: \"<id> <base64url secret>\", newest last\n" + token.FormatKey(k)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil // another process won the race; use its file
	}
	if err != nil {
		return fmt.Errorf("token keys: %w", err)
	}
	if _, err := f.WriteString(line); err != nil {
		f.Close()
		return fmt.Errorf("token keys: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("token keys: %w", err)
	}
	return f.Close()
}
