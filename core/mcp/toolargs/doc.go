// Package toolargs checks a tool's arguments against its input schema and
// decodes them into a Go struct, for core/mcp's typed tools
// (mcp.AddTypedTool); it also derives an input schema from a struct type.
//
// The checks are the subset of JSON Schema that maps onto Go values: type,
// minLength and maxLength, minimum and maximum, enum, items, required, and
// additionalProperties false; other keywords ($ref, oneOf, pattern…) are not
// checked. A failed check is a message naming the argument ("Argument
// \"key\" is required"), which the server sends as a tool execution error
// (SEP-1303), the same in both protocol eras. x-mcp-file arguments are left
// to the caller: their bytes were taken out of the message while it arrived
// and are checked against their descriptor there.
package toolargs
