// Package markdown reads and writes memories as Markdown: the memory files
// agents keep (Claude Code's CLAUDE.md, OpenClaw's MEMORY.md and daily
// notes memory/YYYY-MM-DD.md) and hmo's own Markdown export.
//
// Parse turns a file into items: each top-level list item (with its
// nested items and continuation lines) and each paragraph is one memory.
// Headings give context: a heading that starts with a date (2024-03-02)
// dates the items under it, one of the form "scope: NAME" scopes them. A
// daily note's file name dates all of its items. Front matter, HTML
// comments and horizontal rules are skipped; fenced code is kept verbatim
// in the block it belongs to.
//
// Write renders records grouped by scope and day in exactly that form, so
// Parse reads an export back to the same texts, scopes and days. Markdown
// keeps no roles, sessions, times of day or ids: JSONL is the lossless
// format.
package markdown
