package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/hmo-dev/hmo"
	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/localllm/ollama"
)

// Environment variables of the model flags.
const (
	envChatModel  = "HMO_CHAT_MODEL"
	envEmbedModel = "HMO_EMBED_MODEL"
	envEmbedder   = "HMO_EMBEDDER"
)

// defaultEnrichWait bounds how long add and import wait for the LLM steps
// of what they stored before exiting.
const defaultEnrichWait = 30 * time.Second

// modelFlags configure the local models: the Ollama server, the chat
// model of the LLM steps and the embedder of a new store.
type modelFlags struct {
	host       string
	chatModel  string
	embedder   string
	enrichWait time.Duration
}

// register adds the model flags of the groups in which (see
// storeFlags.register).
func (m *modelFlags) register(fs *pflag.FlagSet, which int) {
	if which&(withOllama|withChat|withEmbedder) != 0 {
		fs.StringVar(&m.host, "ollama-host", "", "Ollama server (default $OLLAMA_HOST or "+ollama.DefaultHost+")")
	}
	if which&withChat != 0 {
		fs.StringVar(&m.chatModel, "chat-model", "", "Ollama chat model for the LLM steps, e.g. "+ollama.DefaultChatModel+" (default $"+envChatModel+"; none: embedded defaults)")
	}
	if which&withEmbedder != 0 {
		fs.StringVar(&m.embedder, "embedder", "", "embedder of a new store: static or ollama[:model] (default $"+envEmbedder+" or static; ollama alone means $"+envEmbedModel+" or "+ollama.DefaultEmbedModel+")")
	}
	if which&withEnrichWait != 0 {
		fs.DurationVar(&m.enrichWait, "enrich-wait", defaultEnrichWait, "how long to wait for the LLM steps of what was stored before leaving them to the next open")
	}
}

// resolve fills the flags' defaults from the environment.
func (m *modelFlags) resolve(env *env) *hmo.Models {
	mm := &hmo.Models{Host: m.host, ChatModel: m.chatModel, Embedder: m.embedder}
	if mm.Host == "" {
		mm.Host = env.getenv(ollama.EnvHost)
	}
	if mm.ChatModel == "" {
		mm.ChatModel = env.getenv(envChatModel)
	}
	if mm.Embedder == "" {
		mm.Embedder = env.getenv(envEmbedder)
	}
	mm.Embedder = embedderSpec(env, mm.Embedder)
	return mm
}

// embedderSpec completes "ollama" with $HMO_EMBED_MODEL.
func embedderSpec(env *env, spec string) string {
	if spec == hmo.EmbedderOllama {
		if model := env.getenv(envEmbedModel); model != "" {
			return hmo.EmbedderOllama + ":" + model
		}
	}
	return spec
}

// settle waits, within --enrich-wait, for the LLM steps of the records
// just stored. Records still queued are enriched on the next open.
func (m *modelFlags) settle(ctx context.Context, env *env, e *engine.Engine) {
	if e.Options().Enricher == nil || m.enrichWait <= 0 {
		return
	}
	wctx, cancel := context.WithTimeout(ctx, m.enrichWait)
	defer cancel()
	if err := e.WaitEnriched(wctx); err != nil {
		fmt.Fprintf(env.stderr, "hmo: LLM steps not finished after %s (%v); the records are stored and are enriched the next time the store is open\n", m.enrichWait, err)
	}
}
