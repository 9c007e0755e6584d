package main

import (
	"html/template"
	"net/http"
	"net/url"
)

var loginPage = template.Must(template.New("login").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>mcpblob-testas sign in</title></head>
<body>
<h1>Sign in</h1>
{{if .Error}}<p id="error">{{.Error}}</p>{{end}}
<form method="post" action="{{.Action}}">
<input type="hidden" name="id" value="{{.ID}}">
<p><label>Username <input id="username" name="username" autocomplete="username"></label></p>
<p><label>Password <input id="password" name="password" type="password" autocomplete="current-password"></label></p>
<p><button id="submit" type="submit">Sign in</button></p>
</form>
</body></html>
`))

// loginHandler serves the login page (GET <issuer>/login?id=<auth request
// id>) and its form (POST <issuer>/login: id, username, password). A good
// form redirects to zitadel's callback, <issuer>/authorize/callback?id=…,
// which redirects to the client's redirect_uri with code and state.
func loginHandler(s *storage, action, callback string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.FormValue("id")
		if r.Method != http.MethodPost {
			renderLogin(w, http.StatusOK, action, id, "")
			return
		}
		if err := s.login(id, r.PostFormValue("username"), r.PostFormValue("password")); err != nil {
			renderLogin(w, http.StatusUnauthorized, action, id, err.Error())
			return
		}
		http.Redirect(w, r, callback+"?id="+url.QueryEscape(id), http.StatusFound)
	}
}

func renderLogin(w http.ResponseWriter, status int, action, id, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	loginPage.Execute(w, struct{ Action, ID, Error string }{action, id, msg})
}
