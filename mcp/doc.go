// Package mcp is hmo's Model Context Protocol server, built with the
// official Go SDK: the memory tools (memory_search, memory_get,
// memory_add, memory_update, memory_delete, memory_list, memory_context,
// memory_stats) over any api.Service. Every tool declares input and output
// schemas; every response is paged or budgeted far below 25,000 tokens;
// failures are tool errors (isError results), never protocol crashes.
// hmo mcp serves it on stdio, or on streamable HTTP on loopback.
package mcp
