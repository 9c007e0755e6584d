package blobs

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/token"
	"github.com/mcpblob/mcpblob/storage"
)

// Tool annotations (hints).
var (
	readOnly    = json.RawMessage(`{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}`)
	destructive = json.RawMessage(`{"readOnlyHint":false,"destructiveHint":true,"idempotentHint":true,"openWorldHint":false}`)
	minting     = json.RawMessage(`{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":false,"openWorldHint":false}`)
)

func (a *App) registerTools(s *mcp.Server) error {
	return errors.Join(
		mcp.AddTypedTool(s, &mcp.Tool{Name: "list_blobs", Title: "List blobs",
			Description: "List stored blobs whose keys start with prefix, one page at a time.",
			InputSchema: schema("list_blobs.input"), OutputSchema: schema("list_blobs.output"), Annotations: readOnly}, a.listBlobs),
		mcp.AddTypedTool(s, &mcp.Tool{Name: "stat_blob", Title: "Describe a blob",
			Description: "Return a blob's size, SHA-256 and media type, with a resource link to read it.",
			InputSchema: schema("key.input"), OutputSchema: schema("blob.output"), Annotations: readOnly}, a.statBlob),
		mcp.AddTypedTool(s, &mcp.Tool{Name: "delete_blob", Title: "Delete a blob",
			Description: "Delete a stored blob. Subscribers get resources/updated and list_changed notifications.",
			InputSchema: schema("key.input"), OutputSchema: schema("delete_blob.output"), Annotations: destructive}, a.deleteBlob),
		mcp.AddTypedTool(s, &mcp.Tool{Name: "get_download_link", Title: "Get a download link",
			Description: "Mint a signed, expiring HTTPS link that downloads the blob's raw bytes.",
			InputSchema: schema("get_download_link.input"), OutputSchema: schema("get_download_link.output"), Annotations: minting}, a.downloadLink))
}

// The arguments of the tools, checked against their schemas (schemas/)
// before the handlers run.
type (
	listArgs struct {
		Prefix string `json:"prefix"`
		Cursor string `json:"cursor"`
		Limit  int    `json:"limit"` // 0: the page size
	}
	keyArgs struct {
		Key string `json:"key"`
	}
	linkArgs struct {
		Key        string `json:"key"`
		TTLSeconds int64  `json:"ttlSeconds"` // 0: DefaultLinkTTL
		Filename   string `json:"filename"`
		SingleUse  bool   `json:"singleUse"`
	}
)

func mediaType(info storage.Info) string {
	if info.MediaType == "" {
		return storage.DefaultMediaType
	}
	return info.MediaType
}

// blobStruct is a blob's structuredContent.
func blobStruct(info storage.Info) mcp.Object {
	return mcp.Object{"uri": URI(info.Key), "key": info.Key, "size": info.Size, "sha256": info.SHA256, "mimeType": mediaType(info)}
}

// resource describes a blob as an MCP Resource.
func resource(info storage.Info) mcp.Resource {
	r := mcp.Resource{URI: URI(info.Key), Name: info.Key, MIMEType: mediaType(info), Size: info.Size, Title: info.Filename,
		// SEP-2532: blobs prefer resources/stream (harmless to clients
		// that do not know the field).
		Streamable: true}
	if !info.ModTime.IsZero() {
		r.Annotations = mcp.Object{"lastModified": info.ModTime.UTC().Format(time.RFC3339)}
	}
	return r
}

func resourceLink(info storage.Info) mcp.ResourceLink {
	return mcp.ResourceLink{Resource: resource(info)}
}

func structuredText(v any) mcp.Text {
	b, _ := json.Marshal(v)
	return mcp.Text{Text: string(b)}
}

// blobResult is a tool result describing one blob, with a link to read it.
func blobResult(info storage.Info) *mcp.ToolResult {
	sc := blobStruct(info)
	return &mcp.ToolResult{Content: []mcp.Content{structuredText(sc), resourceLink(info)}, StructuredContent: sc}
}

// keyError is the isError result for a storage error about the key
// argument, or nil for a server fault.
func keyError(key string, err error) *mcp.ToolResult {
	if why := keyProblem(err); why != "" {
		return mcp.ToolError("Argument %q: %s", "key", why)
	}
	if errors.Is(err, storage.ErrNotFound) {
		return mcp.ToolError("Blob %q not found", key)
	}
	return nil
}

// keyProblem says why a key cannot be used, from a storage error: the key
// rule it breaks, or the blob in its way; "" for any other error.
func keyProblem(err error) string {
	var (
		ke *storage.KeyError
		pe *storage.PathConflictError
	)
	switch {
	case errors.As(err, &ke):
		return "not a valid key (" + ke.Reason + ")"
	case errors.As(err, &pe) && strings.HasSuffix(pe.Conflict, "/"):
		return fmt.Sprintf("%q conflicts with the blobs under %q: a key cannot be both a blob and a folder of blobs",
			storage.TruncateKey(pe.Key), storage.TruncateKey(pe.Conflict))
	case errors.As(err, &pe):
		return fmt.Sprintf("%q conflicts with the blob %q, one of its parents: a key cannot be both a blob and a folder of blobs",
			storage.TruncateKey(pe.Key), storage.TruncateKey(pe.Conflict))
	case errors.Is(err, storage.ErrInvalidKey):
		return "not a valid key"
	case errors.Is(err, storage.ErrPathConflict):
		return "conflicts with the path of another blob"
	}
	return ""
}

func (a *App) listBlobs(c *mcp.Call, in listArgs) (*mcp.ToolResult, error) {
	if in.Limit == 0 {
		in.Limit = a.opts.PageSize
	}
	page, err := a.view(c).List(c.Context(), in.Prefix, in.Cursor, in.Limit)
	if err != nil {
		if errors.Is(err, storage.ErrInvalidCursor) {
			return mcp.ToolError("Invalid cursor"), nil
		}
		return nil, fmt.Errorf("blobs: list_blobs: %w", err)
	}
	blobs := make([]any, 0, len(page.Items))
	for _, info := range page.Items {
		blobs = append(blobs, blobStruct(info))
	}
	sc := mcp.Object{"blobs": blobs}
	if page.NextCursor != "" {
		sc["nextCursor"] = page.NextCursor
	}
	content := []mcp.Content{structuredText(sc)}
	for _, info := range page.Items {
		content = append(content, resourceLink(info))
	}
	return &mcp.ToolResult{Content: content, StructuredContent: sc}, nil
}

func (a *App) statBlob(c *mcp.Call, in keyArgs) (*mcp.ToolResult, error) {
	key := in.Key
	info, err := a.view(c).Stat(c.Context(), key)
	if err != nil {
		if r := keyError(key, err); r != nil {
			return r, nil
		}
		return nil, fmt.Errorf("blobs: stat_blob %q: %w", key, err)
	}
	return blobResult(info), nil
}

func (a *App) deleteBlob(c *mcp.Call, in keyArgs) (*mcp.ToolResult, error) {
	key := in.Key
	store := a.view(c)
	info, err := store.Stat(c.Context(), key)
	if err == nil {
		err = store.Delete(c.Context(), key)
	}
	if err != nil {
		if r := keyError(key, err); r != nil {
			return r, nil
		}
		return nil, fmt.Errorf("blobs: delete_blob %q: %w", key, err)
	}
	a.Changed(a.raw(c, key))
	sc := blobStruct(info)
	sc["deleted"] = true
	// No resource_link: the blob it would name is gone.
	return &mcp.ToolResult{Content: []mcp.Content{structuredText(sc)}, StructuredContent: sc}, nil
}

// linkFilenameProblem checks the filename a link names (the filename rules:
// at most 255 bytes, no control characters).
func linkFilenameProblem(name string) string {
	var fe *storage.FilenameError
	if errors.As(storage.ValidateFilename(name), &fe) {
		return fmt.Sprintf("Argument %q: %s", "filename", fe.Reason)
	}
	return ""
}

// downloadLink is the get_download_link tool: a signed, expiring
// "<DownloadURL>/d/<token>" link to the blob's raw bytes, bound to the caller
// and the key. The link itself is the credential until it expires.
func (a *App) downloadLink(c *mcp.Call, in linkArgs) (*mcp.ToolResult, error) {
	key, filename := in.Key, in.Filename
	if bad := linkFilenameProblem(filename); bad != "" {
		return mcp.ToolError("%s", bad), nil
	}
	ttl := time.Duration(in.TTLSeconds) * time.Second
	if ttl == 0 {
		ttl = DefaultLinkTTL
	}
	info, err := a.view(c).Stat(c.Context(), key)
	if err != nil {
		if r := keyError(key, err); r != nil {
			return r, nil
		}
		return nil, fmt.Errorf("blobs: get_download_link %q: %w", key, err)
	}
	link, err := a.keyring.MintDownload(a.opts.DownloadURL, token.DownloadGrant{
		Principal: c.Principal(), Key: a.raw(c, info.Key), Version: info.ETag, Filename: filename, SingleUse: in.SingleUse, TTL: ttl})
	if err != nil {
		return nil, fmt.Errorf("blobs: get_download_link %q: %w", key, err)
	}
	res := blobResult(info)
	sc := res.StructuredContent.(mcp.Object)
	sc["url"] = link.URL
	sc["expiresAt"] = link.Expires.UTC().Format(time.RFC3339)
	res.Content[0] = structuredText(sc)
	return res, nil
}
