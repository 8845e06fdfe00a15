package mcp_test

import (
	"context"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hmo-dev/hmo/mcp"
)

func TestResources(t *testing.T) {
	cs := session(t)
	ctx := context.Background()
	if _, isErr, text := callTool(t, cs, "memory_add", map[string]any{"text": "Ana moved to Porto in March", "scope": "ana"}); isErr {
		t.Fatal(text)
	}
	res, err := cs.ListResources(ctx, nil)
	if err != nil || len(res.Resources) != 1 || res.Resources[0].URI != mcp.PersonaURI {
		t.Fatalf("resources = %+v, %v; want %s", res, err, mcp.PersonaURI)
	}
	tpl, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(tpl.ResourceTemplates) != 1 || tpl.ResourceTemplates[0].URITemplate != mcp.RecordURITemplate {
		t.Fatalf("templates = %+v, %v; want %s", tpl, err, mcp.RecordURITemplate)
	}
	read := func(uri string) (string, error) {
		r, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		if err != nil {
			return "", err
		}
		if len(r.Contents) != 1 || r.Contents[0].URI != uri {
			t.Fatalf("%s: contents %+v", uri, r.Contents)
		}
		return r.Contents[0].Text, nil
	}
	if text, err := read(mcp.PersonaURI); err != nil || text == "" {
		t.Errorf("persona = %q, %v", text, err)
	}
	if text, err := read("memory://record/1"); err != nil || !strings.Contains(text, `"text": "Ana moved to Porto in March"`) || !strings.Contains(text, `"scope": "ana"`) {
		t.Errorf("record 1 = %q, %v", text, err)
	}
	for _, uri := range []string{"memory://record/99", "memory://record/0", "memory://record/x", "memory://record/-1"} {
		if text, err := read(uri); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Errorf("%s = %q, %v; want resource not found", uri, text, err)
		}
	}
}

func TestRecallPrompt(t *testing.T) {
	cs := session(t)
	ctx := context.Background()
	callTool(t, cs, "memory_add", map[string]any{"text": "deploys go through scripts/deploy.sh", "scope": "repo"})
	ps, err := cs.ListPrompts(ctx, nil)
	if err != nil || len(ps.Prompts) != 1 || ps.Prompts[0].Name != mcp.RecallPrompt {
		t.Fatalf("prompts = %+v, %v", ps, err)
	}
	got, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: mcp.RecallPrompt, Arguments: map[string]string{"task": "how do I deploy", "scope": "repo"}})
	if err != nil || len(got.Messages) != 1 {
		t.Fatalf("recall = %+v, %v", got, err)
	}
	text := got.Messages[0].Content.(*sdk.TextContent).Text
	if !strings.Contains(text, "scripts/deploy.sh") || !strings.HasSuffix(text, "Task: how do I deploy") || got.Messages[0].Role != "user" {
		t.Errorf("recall message = %q", text)
	}
	got, err = cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: mcp.RecallPrompt, Arguments: map[string]string{"task": "what is the cat's name", "scope": "nobody"}})
	if err != nil || !strings.Contains(got.Messages[0].Content.(*sdk.TextContent).Text, "nothing relevant") {
		t.Errorf("recall with no memories = %+v, %v", got, err)
	}
	if _, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: mcp.RecallPrompt, Arguments: map[string]string{"task": " "}}); err == nil {
		t.Error("recall without a task succeeded")
	}
}
