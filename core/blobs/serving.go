package blobs

import (
	"mime"
	"strings"
)

// How stored bytes are served (docs/security.md, "How
// stored content is served"). Whatever a client stored, a browser that
// opens it must never run it on the origin that serves it. Every answer
// carrying stored bytes therefore sends X-Content-Type-Options: nosniff, so
// the declared type is the one a browser uses; and unless that type is
// inert (see [Inert]) it is sent as an attachment with a sandboxing
// Content-Security-Policy, so even a browser that renders it gives it an
// opaque origin, no script and no requests.

// Header names and values of [SafetyHeaders].
const (
	HeaderContentTypeOptions = "X-Content-Type-Options"
	NoSniff                  = "nosniff"
	HeaderCSP                = "Content-Security-Policy"
	// SandboxPolicy is the Content-Security-Policy of active stored
	// content: a sandboxed document (opaque origin, no script, no forms,
	// no plugins, no top navigation) that may load nothing.
	SandboxPolicy = "sandbox; default-src 'none'"
)

// inertTypes are the media types (lower-case type/subtype) that browsers
// show without running script or rendering active content: raster images
// (not SVG), plain text. audio/* and video/* are inert too, except XML
// based subtypes.
var inertTypes = map[string]bool{
	"image/png": true, "image/apng": true, "image/jpeg": true, "image/pjpeg": true, "image/gif": true,
	"image/webp": true, "image/avif": true, "image/bmp": true, "image/x-icon": true,
	"image/vnd.microsoft.icon": true, "image/tiff": true, "image/heic": true, "image/heif": true,
	"text/plain": true,
}

// Inert reports whether a browser shows stored bytes of mediaType (as
// served, with nosniff) without running script in them or rendering active
// content: raster images, audio and video, plain text. Everything else is
// active: HTML, XHTML, SVG, XML of any kind, JavaScript, CSS, JSON, PDF
// (whose viewers run scripts and forms), application/octet-stream, any
// unknown or malformed type.
func Inert(mediaType string) bool {
	mt, _, err := mime.ParseMediaType(mediaType)
	if err != nil {
		return false
	}
	if inertTypes[mt] {
		return true
	}
	typ, sub, _ := strings.Cut(mt, "/")
	return (typ == "audio" || typ == "video") && !strings.Contains(sub, "xml")
}

// SafetyHeaders returns the headers every answer carrying stored bytes of
// mediaType sends besides Content-Type: nosniff, and for an active type the
// sandboxing CSP. An active type must also go out as an attachment; the
// caller sets Content-Disposition (with the download name).
func SafetyHeaders(mediaType string) [][2]string {
	if Inert(mediaType) {
		return [][2]string{{HeaderContentTypeOptions, NoSniff}}
	}
	return [][2]string{{HeaderContentTypeOptions, NoSniff}, {HeaderCSP, SandboxPolicy}}
}
