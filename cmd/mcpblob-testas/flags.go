package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// baseScopes are always offered; -scope adds more.
var baseScopes = []string{"openid", "profile", "email", "offline_access", "blobs:read", "blobs:write", "blobs:admin"}

// oidcScopes are granted to every user whatever -user-scopes says.
var oidcScopes = []string{"openid", "profile", "email", "offline_access"}

// config is the parsed command line.
type config struct {
	listen    string
	issuer    string // full URL, a path ("/tenant1"), or empty
	alg       string
	noRFC8414 bool
	tokenTTL  time.Duration
	resources []string
	scopes    []string
	users     map[string]*user   // by id
	clients   map[string]*client // by id
}

// user is a -user account.
type user struct {
	id, name, password string
	claims             map[string]any
	scopes             []string // nil: every scope
}

// listFlag collects a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, " ") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	cfg := &config{}
	var users, claims, userScopes, clients, extraScopes listFlag
	fs := flag.NewFlagSet("mcpblob-testas", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.listen, "listen", "127.0.0.1:0", "loopback `host:port` to listen on")
	fs.StringVar(&cfg.issuer, "issuer", "", "issuer `URL`, or a path such as /tenant1 under http://<listen addr> (default http://<listen addr>)")
	fs.StringVar(&cfg.alg, "alg", "RS256", "signing algorithm: RS256 or ES256")
	fs.BoolVar(&cfg.noRFC8414, "no-rfc8414", false, "do not serve /.well-known/oauth-authorization-server (OIDC discovery only)")
	fs.DurationVar(&cfg.tokenTTL, "token-ttl", time.Hour, "access token lifetime")
	fs.Var((*listFlag)(&cfg.resources), "resource", "allowed RFC 8707 resource `URL` (repeatable; the first is the default audience)")
	fs.Var(&extraScopes, "scope", "extra allowed scope `name` (repeatable)")
	fs.Var(&users, "user", "user `id:username:password` (repeatable; default alice:alice:alice-pw and bob:bob:bob-pw)")
	fs.Var(&claims, "user-claim", "extra access token claim `id:name=value` of a user (repeatable)")
	fs.Var(&userScopes, "user-scopes", "restrict a user's scopes: `id:scope1,scope2` (repeatable; default every scope)")
	fs.Var(&clients, "client", "client `id[:secret]=redirect1,redirect2` (repeatable; no secret: public, PKCE S256)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if cfg.alg != "RS256" && cfg.alg != "ES256" {
		return nil, fmt.Errorf("-alg %q: want RS256 or ES256", cfg.alg)
	}
	cfg.scopes = append(slices.Clone(baseScopes), extraScopes...)
	if len(users) == 0 {
		users = listFlag{"alice:alice:alice-pw", "bob:bob:bob-pw"}
	}
	if len(clients) == 0 {
		clients = listFlag{"mcpblob-test=http://127.0.0.1/callback"}
	}
	var err error
	if cfg.users, err = parseUsers(users, claims, userScopes); err != nil {
		return nil, err
	}
	cfg.clients, err = parseClients(clients)
	return cfg, err
}

func parseUsers(users, claims, scopes []string) (map[string]*user, error) {
	byID := map[string]*user{}
	for _, v := range users {
		parts := strings.SplitN(v, ":", 3)
		if len(parts) != 3 || parts[0] == "" || parts[1] == "" {
			return nil, fmt.Errorf("-user %q: want id:username:password", v)
		}
		byID[parts[0]] = &user{id: parts[0], name: parts[1], password: parts[2], claims: map[string]any{}}
	}
	for _, v := range claims {
		id, claim, _ := strings.Cut(v, ":")
		name, value, ok := strings.Cut(claim, "=")
		if byID[id] == nil || !ok || name == "" {
			return nil, fmt.Errorf("-user-claim %q: want id:name=value for a known user", v)
		}
		byID[id].claims[name] = value
	}
	for _, v := range scopes {
		id, list, _ := strings.Cut(v, ":")
		if byID[id] == nil {
			return nil, fmt.Errorf("-user-scopes %q: unknown user", v)
		}
		byID[id].scopes = strings.Split(list, ",")
	}
	return byID, nil
}

func parseClients(clients []string) (map[string]*client, error) {
	byID := map[string]*client{}
	for _, v := range clients {
		cred, redirects, ok := strings.Cut(v, "=")
		id, secret, _ := strings.Cut(cred, ":")
		if !ok || id == "" || redirects == "" {
			return nil, fmt.Errorf("-client %q: want id[:secret]=redirect1,redirect2", v)
		}
		byID[id] = &client{id: id, secret: secret, redirects: strings.Split(redirects, ",")}
	}
	return byID, nil
}

// allowedFor reports whether the user may be granted scope.
func (u *user) allowedFor(scope string) bool {
	return u.scopes == nil || slices.Contains(u.scopes, scope) || slices.Contains(oidcScopes, scope)
}
