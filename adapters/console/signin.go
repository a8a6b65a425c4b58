package console

import (
	"net/http"
	"strings"
)

type signinData struct {
	Next   string
	Error  string
	NoAuth bool
}

// safeNext keeps a post-sign-in redirect inside the console, so a crafted link cannot
// send a person elsewhere after they signed in.
func safeNext(next string) string {
	if !strings.HasPrefix(next, Prefix) || strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n") {
		return Prefix + "runs"
	}
	return next
}

func (c *console) signinPage(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	next := safeNext(r.URL.Query().Get("next"))
	if _, ok := c.current(r); ok {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	c.render(w, r, http.StatusOK, "signin", "page", view{Title: "Sign in", Data: signinData{Next: next, NoAuth: c.cfg.NoAuth}})
}

// signin checks the token against the API's principals and starts a session. The
// token is used once here and never stored: the cookie carries a signed claim.
func (c *console) signin(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if !sameOrigin(r) {
		c.fail(w, r, nil, http.StatusForbidden, "the sign-in form was posted from another site")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, formLimit)
	if err := r.ParseForm(); err != nil {
		c.fail(w, r, nil, http.StatusBadRequest, "the form could not be read: "+err.Error())
		return
	}
	next := safeNext(r.PostForm.Get("next"))
	p, err := c.deps.Tokens.Authenticate(strings.TrimSpace(r.PostForm.Get("token")))
	if err != nil {
		c.log.InfoContext(r.Context(), "console sign-in refused", "remote", r.RemoteAddr)
		c.render(w, r, http.StatusUnauthorized, "signin", "page", view{Title: "Sign in",
			Data: signinData{Next: next, Error: "That token is not valid.", NoAuth: c.cfg.NoAuth}})
		return
	}
	ck, _, err := c.sessions.issue(p, r.TLS != nil)
	if err != nil {
		c.fail(w, r, nil, http.StatusInternalServerError, "could not start a session")
		return
	}
	noteWho(r.Context(), p.Name)
	c.log.InfoContext(r.Context(), "console sign-in", "principal", p.Name, "role", string(p.Role))
	http.SetCookie(w, ck)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// signout ends the session: the cookie is cleared and its id refused from now on.
func (c *console) signout(w http.ResponseWriter, r *http.Request, sess session) {
	c.sessions.revoke(sess)
	http.SetCookie(w, clearCookie(r.TLS != nil))
	http.Redirect(w, r, Prefix+"signin", http.StatusSeeOther)
}
