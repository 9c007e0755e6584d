package blobs

import (
	"embed"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/mcpblob/mcpblob/core/auth"
	"github.com/mcpblob/mcpblob/core/files"
	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/tenancy"
	"github.com/mcpblob/mcpblob/core/token"
	"github.com/mcpblob/mcpblob/storage"
)

// Stream modes of Options.StreamMode.
const (
	StreamDirect   = "direct"
	StreamRedirect = "redirect"
	StreamURL      = "url"
)

// Defaults of [Options].
const (
	DefaultMaxTextBytes = 16 << 20
	DefaultPageSize     = 100
	DefaultLinkTTL      = 15 * time.Minute
	DefaultUploadTTL    = 15 * time.Minute
	DefaultMaxFileBytes = mcp.DefaultMaxFileBytes
	DefaultWaitTimeout  = mcp.DefaultClientTimeout
)

// Options configure an [App]. Only Backend is required.
type Options struct {
	// Backend stores the blobs.
	Backend storage.Backend
	// Keyring signs download links and upload tokens; nil: a random one
	// (links then verify on this process only).
	Keyring *token.Keyring
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// PublicURL is the base of minted URLs (download links, upload
	// endpoints, the upload page). Default "http://127.0.0.1:8080".
	PublicURL string
	// DownloadURL is the base of download links (/d) when they are served
	// from a separate origin (docs/security.md); default PublicURL.
	DownloadURL string
	// MaxTextBytes: text blobs (text/*, JSON, XML… that are valid UTF-8) up
	// to this size are read as text, larger ones as base64. Default 16 MiB.
	MaxTextBytes int64
	// PageSize is the page size of listings. Default 100.
	PageSize int
	// StreamMode selects how resources/stream answers: StreamDirect,
	// StreamRedirect (302 to a presigned URL; stores that cannot presign
	// fall back to direct) or StreamURL (a signed downloadUrl). Default:
	// redirect when the store presigns, else direct.
	StreamMode string
	// LinkTTL is the lifetime of the links and redirects the tools mint.
	// Default 15 min.
	LinkTTL time.Duration
	// MaxFileBytes bounds an uploaded file. Default 1 GiB.
	MaxFileBytes int64
	// UploadAccept is upload_file's accept list; nil: any media type.
	UploadAccept []string
	// UploadTTL is the lifetime of the upload links request_upload mints
	// (binary and URL modes). Default 15 min.
	UploadTTL time.Duration
	// WaitTimeout bounds request_upload's wait for a URL-mode upload.
	// Default 5 min.
	WaitTimeout time.Duration
	// Tenancy says which part of the store each caller sees (a namespace
	// per principal, or the whole store). The zero value shares it.
	Tenancy tenancy.Policy
	// FileURIs says the mcp.Server opens SEP-2631 file URIs with
	// App.OpenFileURI (mcp.Options.OpenFileURI): the file inputs then
	// list "upload" in their transferModes.
	FileURIs bool
}

// App is the blob application. Create it with New and Register it on a
// protocol server.
type App struct {
	opts    Options
	backend storage.Backend
	keyring *token.Keyring
	log     *slog.Logger
	hub     *mcp.Hub
	uploads waiters
	// files keeps SEP-2631 file records; fileServer names this server in
	// their URIs.
	files      *files.Store
	fileServer string
	fileModes  []string // transferModes of the file inputs (set by Register)
	tus        tusOn    // the upload links' tus, when they speak it
	// claims is the server's claims rate, which each file record charges.
	claims interface{ Allow(principal string) error }
}

// New returns the App for opts.
func New(opts Options) (*App, error) {
	if opts.Backend == nil {
		return nil, errors.New("blobs: Options.Backend is required")
	}
	if opts.Keyring == nil {
		opts.Keyring = token.NewRandomKeyring()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.PublicURL == "" {
		opts.PublicURL = "http://127.0.0.1:8080"
	}
	if opts.DownloadURL == "" {
		opts.DownloadURL = opts.PublicURL
	}
	setDefault(&opts.MaxTextBytes, DefaultMaxTextBytes)
	setDefault(&opts.PageSize, DefaultPageSize)
	setDefault(&opts.LinkTTL, DefaultLinkTTL)
	setDefault(&opts.MaxFileBytes, DefaultMaxFileBytes)
	setDefault(&opts.UploadTTL, DefaultUploadTTL)
	setDefault(&opts.WaitTimeout, DefaultWaitTimeout)
	return &App{opts: opts, backend: opts.Backend, keyring: opts.Keyring, log: opts.Logger, hub: &mcp.Hub{},
		files: fileStore(opts.Backend), fileServer: fileServer(opts.PublicURL)}, nil
}

func setDefault[T int | int64 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// Register adds the blob resources and tools to s; changes are published
// on s's Hub from then on. It fails when s refuses a tool (upload_file's
// maxSize, Options.MaxFileBytes, above the server's MaxFileBytes).
func (a *App) Register(s *mcp.Server) error {
	a.hub = s.Hub()
	a.claims = s.Claims()
	a.fileModes = []string{"inline"}
	if a.opts.FileURIs {
		a.fileModes = append(a.fileModes, "upload")
	}
	s.AddResourceTemplate(mcp.ResourceTemplate{URITemplate: URITemplate, Name: "blob", Title: "Stored blob",
		Description: "A blob in the store, by key", Streamable: true},
		mcp.ResourceHandler{Read: a.read, List: a.list, Stream: a.stream, Complete: a.complete})
	if err := a.registerTools(s); err != nil {
		return err
	}
	a.registerFiles(s)
	return a.registerUploads(s)
}

// Changed announces that the blob under the store key raw was created,
// replaced or deleted (the control API and the upload endpoints call it
// too): to its namespace in the namespace's keys, and to admins.
func (a *App) Changed(raw string) {
	for _, ch := range a.opts.Tenancy.Changes(raw) {
		a.hub.PublishResourceChange(URI(ch.Key), ch.Audience)
	}
}

// identity is the caller of c.
func identity(c *mcp.Call) auth.Identity {
	return auth.Identity{Principal: c.Principal(), Scopes: c.Scopes()}
}

// view is the store as the caller of c sees it.
func (a *App) view(c *mcp.Call) storage.Backend {
	return a.opts.Tenancy.Store(a.backend, identity(c))
}

// raw is the store key of the caller's key.
func (a *App) raw(c *mcp.Call, key string) string {
	return a.opts.Tenancy.Raw(identity(c), key)
}

//go:embed schemas/*.json
var schemaFiles embed.FS

// schema returns an embedded schema file.
func schema(name string) json.RawMessage {
	b, err := schemaFiles.ReadFile("schemas/" + name + ".json")
	if err != nil {
		panic("bug: missing schema " + name)
	}
	return b
}
