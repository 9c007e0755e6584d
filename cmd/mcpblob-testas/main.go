package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case err != nil:
		fmt.Fprintln(os.Stderr, "mcpblob-testas:", err)
		os.Exit(1)
	}
}

// run serves until ctx ends. Once listening it writes the line
// "mcpblob-testas listening on <issuer>" to stdout.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	ln, err := listenLoopback(cfg.listen)
	if err != nil {
		return err
	}
	defer ln.Close()
	issuer := issuerURL(cfg.issuer, ln.Addr().String())
	h, err := newHandler(cfg, issuer)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, "mcpblob-testas listening on %s\n", issuer)
	select {
	case err = <-served:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// listenLoopback listens on addr, whose host must be a loopback address or
// localhost.
func listenLoopback(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("-listen %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("-listen %q: only loopback addresses are allowed", addr)
	}
	return net.Listen("tcp", addr)
}

// issuerURL is the -issuer flag: a full URL, or a path under
// http://<listen addr>, or empty for http://<listen addr> itself.
func issuerURL(flag, addr string) string {
	if flag == "" || strings.HasPrefix(flag, "/") {
		return "http://" + addr + strings.TrimSuffix(flag, "/")
	}
	return strings.TrimSuffix(flag, "/")
}
