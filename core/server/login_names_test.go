package server

import (
	"time"

	"github.com/mcpblob/mcpblob/core/server/telemetry"
)

// The upload page sign-in's names on the wire (package blobsvc, login.go)
// as the browser and the authorization server see them; the tests below
// check the service against them.
const (
	callbackPath      = telemetry.PathOAuthCallback
	logoutPath        = telemetry.PathOAuthLogout
	loginCookie       = "mcpblob_login"
	loginStateCookie  = "mcpblob_login_state"
	purposeLogin      = "login"
	purposeLoginState = "login-state"
	loginStateTTL     = 10 * time.Minute
)
