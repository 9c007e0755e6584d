package mcp

import "github.com/mcpblob/mcpblob/core/mcp/events"

// EventKind says what changed ([events.Kind]).
type EventKind = events.Kind

// Event kinds published on a [Hub].
const (
	ResourceUpdated     = events.ResourceUpdated     // URI names the resource
	ResourceListChanged = events.ResourceListChanged // the resources list changed
	ToolListChanged     = events.ToolListChanged     // the tools list changed
	PromptListChanged   = events.PromptListChanged   // the prompts list changed
)

// Event is one change notification ([events.Event]).
type Event = events.Event

// Hub fans change events out to open notification streams in this process
// ([events.Hub]). The zero value is ready to use.
type Hub = events.Hub
