package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpblob/mcpblob/core/token"
)

func TestLoadKeyring(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	k := token.NewKey("env1")
	other, _ := token.NewKeyring(k)
	tok, _ := other.Sign(token.Claims{Purpose: token.PurposeDownload})

	// From the environment's text.
	kr, err := loadKeyring(Config{TokenKeysData: token.FormatKey(k), Data: t.TempDir()}, log)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kr.Verify(tok, token.PurposeDownload); err != nil {
		t.Fatalf("a key from MCPBLOB_TOKEN_KEYS_DATA does not verify: %v", err)
	}
	if _, err := loadKeyring(Config{TokenKeysData: "garbage"}, log); err == nil {
		t.Fatal("bad MCPBLOB_TOKEN_KEYS_DATA accepted")
	}

	// Generated on first start in the local store's reserved folder, then reused.
	data := t.TempDir()
	kr1, err := loadKeyring(Config{Data: data}, log)
	if err != nil {
		t.Fatal(err)
	}
	tok1, _ := kr1.Sign(token.Claims{Purpose: token.PurposeDownload})
	kr2, err := loadKeyring(Config{Data: data}, log)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kr2.Verify(tok1, token.PurposeDownload); err != nil {
		t.Fatalf("the generated keys changed across starts: %v", err)
	}
	if st, err := os.Stat(filepath.Join(data, ".mcpblob", "token-keys")); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("generated keys file: %v %v", st, err)
	}
}
