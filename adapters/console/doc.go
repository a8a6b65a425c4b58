// Package console is the web console of `sluice serve` (SPEC §14.8): server-rendered
// pages under /ui/ (html/template, assets embedded in the binary, one small script for
// live updates) that call the same use-cases as the REST adapter with the signed-in
// principal, so every role, tenant and approval rule of the API holds here too.
//
// A person signs in with an API token once; the console then keeps a signed session
// cookie (HttpOnly, SameSite=Strict, 12 h) that never carries the token, asks for a
// CSRF token on every form POST, and answers every page with a Content-Security-Policy
// of default-src 'self'. A sign-out is recorded in the history (the Signouts port), so
// every member refuses the cookie from then on, restarts included. The console hides
// controls a principal may not use, but the use-cases decide: a forged POST is refused by
// them, not by the template. Requests are logged, counted and traced like the API's.
package console
