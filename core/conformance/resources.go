package conformance

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpblob/mcpblob/core/mcp"
)

const (
	staticTextURI   = "test://static-text"
	staticBinaryURI = "test://static-binary"
	watchedURI      = "test://watched-resource"
	templateURI     = "test://template/{id}/data"
	staticText      = "This is the content of the static text resource."
	watchedText     = "Watched resource content"
)

// addResources registers the three static resources and the JSON
// template.
func (f *fixtures) addResources() {
	s := f.srv
	s.AddResource(mcp.Resource{URI: staticTextURI, Name: "static-text", Title: "Static text",
		Description: "A static text resource", MIMEType: "text/plain", Size: int64(len(staticText))},
		textContents(staticTextURI, "text/plain", staticText))
	s.AddResource(mcp.Resource{URI: staticBinaryURI, Name: "static-binary", Title: "Static binary",
		Description: "A static PNG image", MIMEType: "image/png", Size: int64(len(f.png))},
		func(*mcp.Call) (*mcp.Contents, error) {
			return &mcp.Contents{URI: staticBinaryURI, MIMEType: "image/png", Blob: f.png}, nil
		})
	s.AddResource(mcp.Resource{URI: watchedURI, Name: "watched-resource", Title: "Watched resource",
		Description: "A resource to subscribe to", MIMEType: "text/plain", Size: int64(len(watchedText))},
		textContents(watchedURI, "text/plain", watchedText))
	s.AddResourceTemplate(mcp.ResourceTemplate{URITemplate: templateURI, Name: "template-data", Title: "Template data",
		Description: "A templated JSON resource", MIMEType: "application/json"},
		mcp.ResourceHandler{Read: readTemplate, Complete: completeID})
}

func textContents(uri, mimeType, text string) func(*mcp.Call) (*mcp.Contents, error) {
	return func(*mcp.Call) (*mcp.Contents, error) {
		return &mcp.Contents{URI: uri, MIMEType: mimeType, Text: text}, nil
	}
}

// readTemplate reads test://template/{id}/data, where id is one non-empty
// path segment; any other URI is not this template's.
func readTemplate(_ *mcp.Call, uri string) (*mcp.Contents, error) {
	rest, ok := strings.CutPrefix(uri, "test://template/")
	if !ok {
		return nil, mcp.ErrNoResource
	}
	id, ok := strings.CutSuffix(rest, "/data")
	if !ok || id == "" || strings.Contains(id, "/") {
		return nil, mcp.ErrNoResource
	}
	b, err := json.Marshal(mcp.Object{"id": id, "templateTest": true, "data": "Data for ID: " + id})
	if err != nil {
		return nil, fmt.Errorf("conformance: encode %q: %w", uri, err)
	}
	return &mcp.Contents{URI: uri, MIMEType: "application/json", Text: string(b)}, nil
}

// completeID completes the template's id from a fixed list.
func completeID(_ *mcp.Call, arg, value string) (mcp.Completion, error) {
	if arg != "id" {
		return mcp.Completion{Values: []string{}}, nil
	}
	return completion([]string{"1", "2", "3", "123"}, value), nil
}

// completion is every value of all that starts with prefix.
func completion(all []string, prefix string) mcp.Completion {
	v := mcp.FilterPrefix(all, prefix)
	return mcp.Completion{Values: v, Total: len(v)}
}
