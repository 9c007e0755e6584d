package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcpblob/mcpblob/asm"
)

func runCPU(context.Context, []string, func(string) string) int {
	fmt.Printf("cpu features: %s\n", strings.Join(asm.Features(), " "))
	fmt.Printf("base64 kernel: %s\n", asm.Base64Tier())
	fmt.Printf("json scan:     %s\n", asm.JSONScanTier())
	return exitOK
}
