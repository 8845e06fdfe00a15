// Package stress holds the multi-process stress test of one store: MCP
// servers, Claude Code hooks and CLI commands, started and killed
// repeatedly, all served by one daemon started on demand. Its duration is
// $HMO_STRESS (a Go duration; default DefaultDuration); CI runs a minute.
package stress
