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

// signout ends the session: its id is recorded as signed out (refused from now on by
// every member) and the cookie is cleared. When the sign-out cannot be recorded the
// cookie is still cleared here, but the person is told that copies of it stay valid
// until it expires, rather than shown the sign-in page as if all went well.
func (c *console) signout(w http.ResponseWriter, r *http.Request, sess session) {
	err := c.sessions.revoke(r.Context(), sess)
	http.SetCookie(w, clearCookie(r.TLS != nil))
	if err != nil {
		c.log.ErrorContext(r.Context(), "console sign-out not recorded", "principal", sess.Name,
			"error", c.deps.Redact(err.Error()))
		c.fail(w, r, nil, http.StatusServiceUnavailable,
			"The sign-out could not be recorded: this browser no longer has the session, but a copy of its cookie stays valid until it expires. Sign in and out again when the server is healthy.")
		return
	}
	c.log.InfoContext(r.Context(), "console sign-out", "principal", sess.Name)
	http.Redirect(w, r, Prefix+"signin", http.StatusSeeOther)
}
