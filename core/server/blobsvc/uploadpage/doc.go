// Package uploadpage serves the browser side of URL-mode uploads: the
// upload page GET /upload/{token} (embedded HTML under a per-response CSP
// nonce: file picker, drag and drop, progress, sending to /u/{token}, with
// tus and resuming after a reload when the server offers it) and,
// with OAuth, its sign-in at the authorization server (/oauth/callback,
// /oauth/logout; login.go), which proves that whoever opened the link is
// the user the upload is for. The blob service (package blobsvc) routes
// these paths here and asks LoginSubject who signed in when a browser
// sends the file.
package uploadpage
