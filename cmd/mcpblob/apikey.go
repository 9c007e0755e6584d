package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/mcpblob/mcpblob/core/auth"
)

func init() {
	commands["apikey"] = command{"apikey [--scopes read,write,admin] [PRINCIPAL]: mint an API key and print its --auth-keys line", runAPIKey}
}

// maxPrincipalLen bounds a principal name.
const maxPrincipalLen = 64

// runAPIKey prints a fresh random API key (give it to the client as
// MCPBLOB_API_KEY or a bearer token) and, on stderr, the hashed line to append
// to the server's --auth-keys file. The server never stores the key itself.
// Flags are parsed (-h prints the usage); the principal name must be sane
// (principalProblem), so no flag or typo becomes a principal.
func runAPIKey(_ context.Context, args []string, _ func(string) string) int {
	const synopsis = "apikey [--scopes read,write,admin] [PRINCIPAL]"
	fs := flag.NewFlagSet("mcpblob apikey", flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	scopeList := fs.String("scopes", "read,write", "the key's scopes: read, write and/or admin (every namespace), comma-separated")
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: mcpblob %s\n\nPRINCIPAL names the key's owner (default key-<first 8 hex digits of its hash>):\n"+
			"1 to %d of A-Z a-z 0-9 . _ @ + -, starting with a letter or digit.\n", synopsis, maxPrincipalLen)
	}
	rest, err := parseAnywhere(fs, args)
	if err != nil {
		return exitUsage // flag printed the error (unless -h) and the usage
	}
	if len(rest) > 1 {
		return apikeyUsage(synopsis, errors.New("at most one principal"))
	}
	principal := ""
	if len(rest) == 1 {
		if why := principalProblem(rest[0]); why != "" {
			return apikeyUsage(synopsis, fmt.Errorf("principal %q %s", rest[0], why))
		}
		principal = rest[0]
	}
	scopes, err := auth.ParseKeyScopes(*scopeList)
	if err != nil {
		return apikeyUsage(synopsis, fmt.Errorf("--scopes: %w", err))
	}
	raw := make([]byte, 32)
	rand.Read(raw)
	key := "mcpb_" + base64.RawURLEncoding.EncodeToString(raw)
	line := auth.KeyLine(key, principal, scopes)
	fmt.Println(key)
	fmt.Fprintf(os.Stderr, "append this line to the --auth-keys file:\n%s\n", line)
	return exitOK
}

// apikeyUsage prints err (when set) and the usage, and returns exitUsage.
func apikeyUsage(synopsis string, err error) int {
	if err != nil {
		fmt.Fprintf(os.Stderr, "mcpblob apikey: %v\n", err)
	}
	fmt.Fprintf(os.Stderr, "usage: mcpblob %s\n", synopsis)
	return exitUsage
}

// principalProblem says what is wrong with a principal name, or "": 1 to
// maxPrincipalLen ASCII letters, digits and . _ @ + -, the first a letter or
// digit (so it is never taken for a flag, a comment or a path).
func principalProblem(name string) string {
	switch {
	case name == "":
		return "is empty"
	case len(name) > maxPrincipalLen:
		return fmt.Sprintf("is longer than %d characters", maxPrincipalLen)
	case !isAlnum(name[0]):
		return "must start with a letter or a digit"
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !isAlnum(c) && c != '.' && c != '_' && c != '@' && c != '+' && c != '-' {
			return "may hold only A-Z a-z 0-9 . _ @ + -"
		}
	}
	return ""
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
