// Package mcpe2e holds the end-to-end test of hmo mcp driven by the
// official TypeScript MCP client (e2e.test.mjs, run by node). The Go test
// builds hmo, installs the pinned npm packages when node_modules is
// missing, runs the script and checks that no hmo process is left.
package mcpe2e
