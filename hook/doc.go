// Package hook implements hmo's Claude Code hooks: "hmo hook claude
// <event>" reads the hook's JSON payload on stdin and acts on it through an
// api.Service (the hmo daemon, or the store opened directly).
//
// SessionStart and UserPromptSubmit print memory context for the project
// as the hook's JSON output (hookSpecificOutput.additionalContext), within
// a token budget. Stop, PreCompact, PostCompact and SessionEnd ingest the
// part of the session transcript not yet ingested: prose turns of the user
// and the assistant that say something (package capture drops
// acknowledgements and idle instructions), scoped to the project (its git
// root), with the facts capture distils from them (role "fact", sources
// linking to the turn). PostCompact also remembers the compaction's
// summary (role "summary"). Ingestion happens at
// most once per turn: a per-transcript byte offset is kept under
// Options.StateDir, and turns whose source label is already stored are
// skipped, so a re-run after a crash does not ingest twice.
//
// The hook reads only Claude Code transcripts: a regular *.jsonl file of
// the user's under Options.TranscriptRoots (default
// $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects), at most
// Options.MaxReadBytes per run; other paths are refused with
// ErrTranscript and nothing is written about them (see transcript.go).
//
// Hooks must never block the agent: Claude (the function) returns at
// Options.Timeout whatever its work is blocked on, and its caller is
// expected to exit 0 whatever it returns.
package hook
