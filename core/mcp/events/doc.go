// Package events fans change notifications out inside one process: a
// [Hub] takes the [Event]s that whatever changes resources publishes (a
// resource updated, a list changed) and hands them, best effort, to every
// open notification stream of package mcp (2025-11-25 GET streams,
// 2026-07-28 subscriptions/listen). Package mcp re-exports Hub, Event and
// the kinds.
//
// It imports the standard library only; package mcp imports it, never the
// reverse.
package events
