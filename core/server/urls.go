package server

import (
	"fmt"
	"net/url"
	"strings"
)

// A separate download origin (Options.DownloadURL; docs/security.md, "How
// stored content is served"): /d links are minted on it and served only
// there (package front refuses the rest), and it serves nothing else.

// resolveURLs applies the defaults of PublicURL ("http://" + Front.Listen) and
// DownloadURL (PublicURL), drops their trailing '/', checks the download
// origin and returns its host name, "" when there is none.
func resolveURLs(opts *Options) (dlHost string, err error) {
	if opts.PublicURL == "" {
		opts.PublicURL = "http://" + opts.Front.Listen
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
