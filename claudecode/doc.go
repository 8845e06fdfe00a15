// Package claudecode reads Claude Code session transcripts: the JSONL files
// under ~/.claude/projects/<project>/<session>.jsonl whose path Claude Code
// hands to its hooks as transcript_path.
//
// Each line is one JSON object tagged by "type". Lines of type "user" and
// "assistant" wrap an Anthropic Messages API message whose content is a
// string or an array of blocks. Only what a person or the model said in
// prose becomes a Turn: text blocks of user and assistant messages. Tool
// calls and results, thinking blocks, images, sub-agent (sidechain) and
// meta lines, lines Claude Code wrote itself (model "<synthetic>"),
// slash-command markup and bookkeeping lines (summary,
// file-history-snapshot, system, ...) are skipped. The format is not
// documented as stable, so unknown fields and line types are ignored.
package claudecode
