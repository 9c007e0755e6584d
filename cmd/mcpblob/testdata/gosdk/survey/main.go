// Command survey is the gateway survey of cmd/mcpblob's gateway tests on the
// official MCP Go SDK client (the TypeScript clients run the same survey,
// testdata/gateway-clients/survey.mjs): every tool called with the
// arguments the config gives it (a listed tool without arguments fails the
// run), every listed resource read (its bytes reduced to size and sha256),
// every prompt got, and the form elicitations the server asked for on the
// way, answered with the content the config gives for their message
// ({"ok": true} when none). It prints "summary JSON"; the tests compare the
// summary taken directly with the one taken through the gateway. With
// "attach" in the config it only calls the attach tool once per question
// (the upstream elicits a file) and prints each call's result or error.
//
// usage: survey -url URL -protocol VERSION -config JSON
//
//	config: {"calls": {tool: arguments}, "prompts": {prompt: arguments}, "skipRead": [uri],
//	         "elicit": {message: content}, "attach": [question]}
package main

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type config struct {
	Calls    map[string]json.RawMessage   `json:"calls"`
	Prompts  map[string]map[string]string `json:"prompts"`
	SkipRead []string                     `json:"skipRead"`
	Elicit   map[string]map[string]any    `json:"elicit"`
	Attach   []string                     `json:"attach"`
}

// attachEntry is one attach call: its result, or the error it failed with.
type attachEntry struct {
	Content []mcp.Content `json:"content,omitempty"`
	IsError bool          `json:"isError,omitempty"`
	Error   string        `json:"error,omitempty"`
}

type summary struct {
	Protocol      string                          `json:"protocol"`
	Tools         []toolEntry                     `json:"tools"`
	Calls         map[string]callEntry            `json:"calls"`
	Resources     []resourceEntry                 `json:"resources"`
	Reads         map[string][]digest             `json:"reads"`
	Prompts       []promptEntry                   `json:"prompts"`
	PromptResults map[string][]*mcp.PromptMessage `json:"promptResults"`
	Elicitations  []string                        `json:"elicitations"`
	Attach        []attachEntry                   `json:"attach,omitempty"`
}

type toolEntry struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	InputSchema any    `json:"inputSchema"`
}

type callEntry struct {
	Content []mcp.Content `json:"content"`
	IsError bool          `json:"isError"`
}

type resourceEntry struct {
	URI      string `json:"uri"`
	Name     string `json:"name"`
	MIMEType string `json:"mimeType"`
}

type digest struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType"`
	Kind     string `json:"kind"`
	Size     int    `json:"size"`
	SHA256   string `json:"sha256"`
}

type promptEntry struct {
	Name        string                `json:"name"`
	Description string                `json:"description"`
	Arguments   []*mcp.PromptArgument `json:"arguments"`
}

func main() {
	url := flag.String("url", "", "MCP endpoint")
	version := flag.String("protocol", "2025-11-25", "protocol version to request")
	cfgJSON := flag.String("config", "{}", "the survey's config (JSON)")
	flag.Parse()
	var cfg config
	if err := json.Unmarshal([]byte(*cfgJSON), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, "gosdk survey: config:", err)
		os.Exit(1)
	}
	out, err := run(*url, *version, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gosdk survey:", err)
		os.Exit(1)
	}
	b, _ := json.Marshal(out)
	fmt.Printf("summary %s\n", b)
}

func run(url, version string, cfg config) (*summary, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out := &summary{Calls: map[string]callEntry{}, Reads: map[string][]digest{},
		PromptResults: map[string][]*mcp.PromptMessage{}, Elicitations: []string{}}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpblob-gateway-gosdk", Version: "1.0.0"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			out.Elicitations = append(out.Elicitations, req.Params.Message)
			content, ok := cfg.Elicit[req.Params.Message]
			if !ok {
				content = map[string]any{"ok": true}
			}
			return &mcp.ElicitResult{Action: "accept", Content: content}, nil
		},
	})
	transport := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{}}
	cs, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	defer cs.Close()
	out.Protocol = cs.InitializeResult().ProtocolVersion
	if cfg.Attach != nil {
		return out, surveyAttach(ctx, client, transport, version, cfg, out)
	}
	if err := surveyTools(ctx, cs, cfg, out); err != nil {
		return nil, err
	}
	if err := surveyResources(ctx, cs, cfg, out); err != nil {
		return nil, err
	}
	return out, surveyPrompts(ctx, cs, cfg, out)
}

func surveyTools(ctx context.Context, cs *mcp.ClientSession, cfg config, out *summary) error {
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("tools/list: %w", err)
		}
		out.Tools = append(out.Tools, toolEntry{t.Name, t.Description, t.InputSchema})
		args, ok := cfg.Calls[t.Name]
		if !ok {
			return fmt.Errorf("no arguments for tool %s in the config", t.Name)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: t.Name, Arguments: args})
		if err != nil {
			return fmt.Errorf("tools/call %s: %w", t.Name, err)
		}
		out.Calls[t.Name] = callEntry{res.Content, res.IsError}
	}
	slices.SortFunc(out.Tools, func(a, b toolEntry) int { return cmp.Compare(a.Name, b.Name) })
	return nil
}

// surveyAttach calls attach once per question, each in a session of its
// own (the SDK closes a 2025-11-25 session whose response to the server's
// elicitation/create was not accepted) and bounded to 20s.
func surveyAttach(ctx context.Context, client *mcp.Client, transport *mcp.StreamableClientTransport, version string, cfg config, out *summary) error {
	for _, q := range cfg.Attach {
		cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		cs, err := client.Connect(cctx, &mcp.StreamableClientTransport{Endpoint: transport.Endpoint, HTTPClient: transport.HTTPClient},
			&mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			cancel()
			return fmt.Errorf("connect: %w", err)
		}
		res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "attach", Arguments: map[string]string{"question": q}})
		if err != nil {
			out.Attach = append(out.Attach, attachEntry{Error: err.Error()})
		} else {
			out.Attach = append(out.Attach, attachEntry{Content: res.Content, IsError: res.IsError})
		}
		cs.Close()
		cancel()
	}
	return nil
}

func surveyResources(ctx context.Context, cs *mcp.ClientSession, cfg config, out *summary) error {
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			return fmt.Errorf("resources/list: %w", err)
		}
		out.Resources = append(out.Resources, resourceEntry{r.URI, r.Name, r.MIMEType})
		if slices.Contains(cfg.SkipRead, r.URI) {
			continue
		}
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: r.URI})
		if err != nil {
			return fmt.Errorf("resources/read %s: %w", r.URI, err)
		}
		for _, c := range res.Contents {
			d := digest{URI: c.URI, MIMEType: c.MIMEType, Kind: "text"}
			b := []byte(c.Text)
			if c.Blob != nil {
				d.Kind, b = "blob", c.Blob
			}
			sum := sha256.Sum256(b)
			d.Size, d.SHA256 = len(b), hex.EncodeToString(sum[:])
			out.Reads[r.URI] = append(out.Reads[r.URI], d)
		}
	}
	slices.SortFunc(out.Resources, func(a, b resourceEntry) int { return cmp.Compare(a.URI, b.URI) })
	return nil
}

func surveyPrompts(ctx context.Context, cs *mcp.ClientSession, cfg config, out *summary) error {
	for p, err := range cs.Prompts(ctx, nil) {
		if err != nil {
			return fmt.Errorf("prompts/list: %w", err)
		}
		out.Prompts = append(out.Prompts, promptEntry{p.Name, p.Description, p.Arguments})
		res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: p.Name, Arguments: cfg.Prompts[p.Name]})
		if err != nil {
			return fmt.Errorf("prompts/get %s: %w", p.Name, err)
		}
		out.PromptResults[p.Name] = res.Messages
	}
	slices.SortFunc(out.Prompts, func(a, b promptEntry) int { return cmp.Compare(a.Name, b.Name) })
	return nil
}
