// Package connlimit bounds the connections served at once and those from
// one client address: the next one is answered 503 (all) or 429 (one
// address), with Retry-After and a JSON body, and closed before the HTTP
// server sees it. (fasthttp's own MaxConnsPerIP is not used: its connection
// wrapper races with the idle-connection sweep of a graceful shutdown,
// hides the *net.TCPConn that sendfile needs, and counts IPv4 only; its
// Concurrency limit answers in plain text.)
package connlimit
