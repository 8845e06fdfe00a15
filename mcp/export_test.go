package mcp

import (
	"bytes"
	"strings"
)

// FilterForTest runs the stdio line filter over in and returns the
// lines passed on and the error replies.
func FilterForTest(in string, max int) (passed, replies []string) {
	var good, reply bytes.Buffer
	filterLines(strings.NewReader(in), &good, &reply, max)
	for _, l := range strings.Split(good.String(), "\n") {
		if l != "" {
			passed = append(passed, l)
		}
	}
	for _, l := range strings.Split(reply.String(), "\n") {
		if l != "" {
			replies = append(replies, l)
		}
	}
	return passed, replies
}
