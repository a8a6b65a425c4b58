package console

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/sluicehq/sluice/application/runs"
)

// CookieName is the session cookie. Its value is a signed claim (who, role, tenant,
// expiry, session id); the token the person signed in with is never part of it.
const CookieName = "sluice_session"

// DefaultSessionTTL is how long a session lasts (SPEC §14.8).
const DefaultSessionTTL = 12 * time.Hour

// session is the signed claim of a cookie.
type session struct {
	Name    string    `json:"n"`
	Role    runs.Role `json:"r"`
	Tenant  string    `json:"t,omitempty"`
	Expires int64     `json:"e"` // unix seconds
	ID      string    `json:"s"` // random; CSRF tokens and sign-out are bound to it
}

func (s session) principal() runs.Principal {
	return runs.Principal{Name: s.Name, Role: s.Role, Tenant: s.Tenant}
}

// sessions signs and checks cookies with one HMAC key and asks signouts whether a
// session was ended before its expiry.
type sessions struct {
	key      []byte
	ttl      time.Duration
	now      func() time.Time
	signouts Signouts
	// timeout bounds each read or write of the sign-outs: a slow history refuses the
	// session (or the sign-out) instead of holding the request.
	timeout time.Duration
}

func newSessions(key []byte, ttl time.Duration, now func() time.Time, signouts Signouts, timeout time.Duration) *sessions {
	return &sessions{key: key, ttl: ttl, now: now, signouts: signouts, timeout: timeout}
}

func (s *sessions) mac(parts ...string) []byte {
	m := hmac.New(sha256.New, s.key)
	for _, p := range parts {
		m.Write([]byte(p))
		m.Write([]byte{0})
	}
	return m.Sum(nil)
}

// issue starts a session for p and returns the cookie that carries it.
func (s *sessions) issue(p runs.Principal, secure bool) (*http.Cookie, session, error) {
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, session{}, err
	}
	exp := s.now().Add(s.ttl)
	sess := session{Name: p.Name, Role: p.Role, Tenant: p.Tenant, Expires: exp.Unix(), ID: hex.EncodeToString(id[:])}
	raw, err := json.Marshal(sess)
	if err != nil {
		return nil, session{}, err
	}
	payload := base64.RawURLEncoding.EncodeToString(raw)
	value := payload + "." + base64.RawURLEncoding.EncodeToString(s.mac("session", payload))
	return &http.Cookie{Name: CookieName, Value: value, Path: "/ui/", Expires: exp, MaxAge: int(s.ttl.Seconds()),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: secure}, sess, nil
}

// errNoSession covers every reason a cookie does not stand for a session; the person
// is sent to sign in, whatever the reason.
var errNoSession = errors.New("no valid session")

// check returns the session a cookie value stands for. A well-signed, unexpired cookie
// is still refused when its session was signed out (on any member sharing the sign-outs);
// when the sign-outs cannot be read it is refused too (errSignoutsUnreadable), since a
// signed-out cookie must never pass.
func (s *sessions) check(ctx context.Context, value string) (session, error) {
	payload, sig, ok := strings.Cut(value, ".")
	if !ok {
		return session{}, errNoSession
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, s.mac("session", payload)) {
		return session{}, errNoSession
	}
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return session{}, errNoSession
	}
	var sess session
	if err := json.Unmarshal(raw, &sess); err != nil || sess.ID == "" || sess.Name == "" {
		return session{}, errNoSession
	}
	if !s.now().Before(time.Unix(sess.Expires, 0)) {
		return session{}, errNoSession
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	gone, err := s.signouts.SessionRevoked(ctx, sess.ID)
	if err != nil {
		return session{}, fmt.Errorf("%w: %w", errSignoutsUnreadable, err)
	}
	if gone {
		return session{}, errNoSession
	}
	return sess, nil
}

// errSignoutsUnreadable: whether the session was signed out could not be read.
var errSignoutsUnreadable = errors.New("console sign-outs could not be read")

// revoke ends a session before its expiry: every copy of the cookie is refused from now
// on, by every member that shares the sign-outs (the cookie itself is cleared in the
// browser by the caller).
func (s *sessions) revoke(ctx context.Context, sess session) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	return s.signouts.RevokeSession(ctx, sess.ID, time.Unix(sess.Expires, 0), s.now())
}

// csrf is the token every form of a session carries; it is bound to the session id, so
// a token from another session (or none) is refused.
func (s *sessions) csrf(sess session) string {
	return base64.RawURLEncoding.EncodeToString(s.mac("csrf", sess.ID))
}

func (s *sessions) checkCSRF(sess session, token string) bool {
	got, err := base64.RawURLEncoding.DecodeString(token)
	return err == nil && token != "" && hmac.Equal(got, s.mac("csrf", sess.ID))
}

// clearCookie removes the session cookie from the browser.
func clearCookie(secure bool) *http.Cookie {
	return &http.Cookie{Name: CookieName, Value: "", Path: "/ui/", MaxAge: -1, Expires: time.Unix(1, 0),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: secure}
}
