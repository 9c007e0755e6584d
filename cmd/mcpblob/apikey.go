package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"strings"

	"github.com/mcpblob/mcpblob/core/server"
)

func init() {
	commands["apikey"] = command{"apikey [PRINCIPAL]: mint an API key and print its --auth-keys line", runAPIKey}
}

// runAPIKey prints a fresh random API key (give it to the client as
// MCPBLOB_API_KEY or a bearer token) and, on stderr, the hashed line to append
// to the server's --auth-keys file. The server never stores the key itself.
func runAPIKey(_ context.Context, args []string, _ func(string) string) int {
	if len(args) > 1 || (len(args) == 1 && strings.ContainsAny(args[0], " \t\n#")) {
		return usageError("apikey [PRINCIPAL]", nil)
	}
	raw := make([]byte, 32)
	rand.Read(raw)
	key := "mcpb_" + base64.RawURLEncoding.EncodeToString(raw)
	line := server.HashKey(key)
	if len(args) == 1 {
		line += " " + args[0]
	}
	fmt.Println(key)
	fmt.Fprintf(os.Stderr, "append this line to the --auth-keys file:\n%s\n", line)
	return exitOK
}
