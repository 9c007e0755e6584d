package server

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/valyala/fasthttp"
)

// A separate download origin (Options.DownloadURL; docs/security.md, "How
// stored content is served"): /d links are minted on it and served only
// there, and it serves nothing else, so neither stored bytes on the
// service's origin nor the API on the origin of stored bytes.

// resolveURLs applies the defaults of PublicURL ("http://" + Listen) and
// DownloadURL (PublicURL), drops their trailing '/', checks the download
// origin and returns its host name, "" when there is none.
func resolveURLs(opts *Options) (dlHost string, err error) {
	if opts.PublicURL == "" {
		opts.PublicURL = "http://" + opts.Listen
	}
	opts.PublicURL = strings.TrimSuffix(opts.PublicURL, "/")
	if dlHost, err = downloadHost(opts.PublicURL, opts.DownloadURL); err != nil {
		return "", err
	}
	if opts.DownloadURL = strings.TrimSuffix(opts.DownloadURL, "/"); opts.DownloadURL == "" {
		opts.DownloadURL = opts.PublicURL
	}
	return dlHost, nil
}

// downloadHost checks a DownloadURL against the PublicURL and returns its
// host name, or "" when there is no download origin.
func downloadHost(publicURL, downloadURL string) (string, error) {
	if downloadURL == "" {
		return "", nil
	}
	d, err := url.Parse(downloadURL)
	if err != nil || (d.Scheme != "http" && d.Scheme != "https") || d.Hostname() == "" ||
		d.User != nil || d.RawQuery != "" || d.Fragment != "" || strings.Trim(d.Path, "/") != "" {
		return "", fmt.Errorf("server: DownloadURL %q: want an absolute http(s) URL with no path, query or user", downloadURL)
	}
	p, err := url.Parse(publicURL)
	if err != nil {
		return "", fmt.Errorf("server: PublicURL %q: %w", publicURL, err)
	}
	if strings.EqualFold(strings.TrimSuffix(d.Hostname(), "."), strings.TrimSuffix(p.Hostname(), ".")) {
		return "", fmt.Errorf("server: DownloadURL %q is on the host of PublicURL %q; a download origin needs a host of its own", downloadURL, publicURL)
	}
	return strings.TrimSuffix(d.Hostname(), "."), nil
}

// misdirected refuses, with 404, a request for the wrong origin when a
// download origin is configured: anything but /d (and the health probes)
// on the download host, and /d on any other host. It reports whether it
// answered.
func (s *Server) misdirected(ctx *fasthttp.RequestCtx, path string) bool {
	if s.dlHost == "" || path == "/healthz" || path == "/readyz" {
		return false
	}
	onDownload := strings.EqualFold(strings.TrimSuffix(hostOnly(string(ctx.Host())), "."), s.dlHost)
	isLink := strings.HasPrefix(path, "/d/")
	switch {
	case onDownload && !isLink:
		s.refuseBody(ctx, http.StatusNotFound, "not_found", "this origin serves download links only")
	case !onDownload && isLink:
		s.refuseBody(ctx, http.StatusNotFound, "not_found", "download links are served from "+s.opts.DownloadURL)
	default:
		return false
	}
	return true
}
