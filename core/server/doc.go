// Package server assembles mcpblob's HTTP server: [New] builds, from one
// [Options] grouped per component, the request rules both halves share
// (package gate: Host and Origin, the caller, upload slots, the body rate
// rule), the MCP endpoint (core/mcp) with the blob application (core/blobs)
// registered on it, the blob service (package blobsvc: the control API
// /v1, download links /d, upload endpoints /u, the upload page and its
// sign-in) and the HTTP front (package front: fasthttp, routing, /mcp,
// health, metrics, shutdown), and wires them together. It is the only
// package that imports both front and blobsvc; neither imports the other.
//
// The server-wide settings (Backend, Keyring, Logger, the public and
// download URLs) are set once, at the top of Options, and passed to every
// component; New refuses them where a component's own options repeat them.
// Every log line passes package redact. One-time facts (links redeemed,
// upload ids taken, 2025-11-25 sessions ended) are recorded in the shared
// store by package onetime, swept while the server serves.
package server
