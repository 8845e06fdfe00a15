// Package ui is hmo's memory browser: a web page the daemon (hmo serve)
// serves on loopback under /ui/, where people browse, search, correct and
// prune what their agents remembered. It shows the timeline by scope and
// session (paged), searches with the score and the tier that served each
// result, a record's supersede history, edits (api.UpdateRequest) and
// forgets (api.DeleteRequest, after a confirmation), the persona profile
// and the tier statistics.
//
// The page is plain HTML, CSS and JavaScript embedded in the binary: no
// build step, nothing fetched from elsewhere, and a Content-Security-Policy
// that allows only the page's own files. Memories are untrusted text: the
// script renders every field with DOM text nodes, never as markup.
//
// Access. The daemon's bearer token never reaches the browser. The CLI
// (hmo ui) asks the daemon, with the token, for a login code
// (Handler.LoginCode, through POST /v1/ui/login); the code is single-use
// and short-lived (Options.CodeTTL), and GET /ui/login?code=… trades it
// for a session cookie (HttpOnly, SameSite=Strict, Path /ui/). Cookies do
// not separate the ports of one host, so a page on another loopback port
// is "same-site" and its requests carry the cookie: every call of the
// page's JSON API (/ui/api/…) must also carry the session's CSRF token in
// the X-HMO-CSRF header, which a page of another origin cannot read, and
// requests whose Origin or Sec-Fetch-Site name another origin are refused.
// Requests whose Host is not a loopback name are refused too (DNS
// rebinding). Sessions and codes live in memory: a restarted daemon asks
// for a new login.
package ui
