// Package clientcaps prunes a client's capabilities object to what
// package mcp and its applications read of it, for a 2025-11-25 session
// that keeps it for its life (mcp bounds the pruned size by
// Limits.CapabilityBytes and refuses initialize beyond it). The readers,
// and what they read:
//
//   - mcp's Call.HasCapability (tools' Requires, Call.Input's elicitation,
//     sampling and roots, core/blobs' files): whether a top-level member is
//     present and not null or false — kept for every member, as {} for an
//     object and true for any other value;
//   - elicitation (core/blobs picks the upload mode): which of form, url
//     and binary are present, and binary.maxFileSize;
//   - resourceStreaming: maxStreamSize (a value that is no number keeps
//     the member unreadable, as it was);
//   - extensions (the tasks extension): which ids are present and not null
//     or false.
//
// Everything else — the values of other members, experimental payloads,
// nested objects nobody reads — is dropped. A new reader of a member not
// listed here must be added here, or it reads {}.
//
// It imports the standard library only.
package clientcaps
