package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcpblob/mcpblob/asm"
	"github.com/mcpblob/mcpblob/core/codec"
)

func runCPU(context.Context, []string, func(string) string) int {
	features := strings.Join(asm.Features(), " ")
	if features == "" {
		features = "none used (purego build or no SIMD)"
	}
	fmt.Printf("cpu features:  %s\n", features)
	fmt.Printf("base64 encode: %s\n", codec.Tier())
	fmt.Printf("base64 decode: %s\n", codec.DecodeTier())
	fmt.Printf("json scan:     %s\n", asm.JSONScanTier())
	return exitOK
}
