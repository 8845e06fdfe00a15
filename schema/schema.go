// Package schema is the one source of the JSON Schemas of hmo's requests.
// The limits of package api (k from 1 to MaxSearchK, ids per request,
// token budgets) become schema constraints here, and every interface takes
// its schemas from this package: the MCP server's tool input schemas, and,
// written by tools/schemagen (go generate ./schema/), the OpenClaw plugin's
// tool parameters (integrations/openclaw/src/schema.gen.ts) and the request
// schemas of server/openapi.json; a test of tools/schemagen fails when those
// files are stale. A limit changed in api changes all of them.
//
// Everything here is a pure function of package api; it is safe for
// concurrent use.
package schema

//go:generate go run ../tools/schemagen -ts ../integrations/openclaw/src/schema.gen.ts -openapi ../server/openapi.json

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hmo-dev/hmo/api"
	"github.com/hmo-dev/hmo/engine"
)

// Limit constrains one request field. Zero fields do not constrain.
type Limit struct {
	Minimum, Maximum   float64 // numbers
	MinItems, MaxItems int     // arrays
	ItemMinimum        float64 // numbers in an array
	MinLength          int     // strings, in characters
	MaxLength          int     // strings, in characters
	Default            any     // the value an omitted field takes
}

// Request names, one per operation.
const (
	Search  = "search"
	Get     = "get"
	Add     = "add"
	Update  = "update"
	Delete  = "delete"
	List    = "list"
	Context = "context"
	Stats   = "stats"
)

// Requests lists the request names in a stable order.
var Requests = []string{Search, Get, Add, Update, Delete, List, Context, Stats}

// Limits returns the constraints of request's fields by JSON name, and of
// the new memories in an add request under "memories.<field>".
func Limits(request string) map[string]Limit {
	switch request {
	case Search:
		return map[string]Limit{
			"query":      {MinLength: 1},
			"k":          {Minimum: 1, Maximum: api.MaxSearchK, Default: api.DefaultSearchK},
			"max_tokens": {Minimum: 1, Maximum: api.MaxSearchTokens, Default: api.DefaultSearchTokens},
			"min_score":  {Maximum: 1}, // negative: no floor
		}
	case Get:
		return map[string]Limit{"ids": {MinItems: 1, MaxItems: api.MaxGetIDs, ItemMinimum: 1}}
	case Add:
		return map[string]Limit{
			"memories":        {MinItems: 1, MaxItems: api.MaxAddMemories},
			"text":            {MinLength: 1}, // the MCP tool adds one memory
			"memories.text":   {MinLength: 1},
			"idempotency_key": {MaxLength: engine.MaxKeyBytes}, // bytes there: a bound, not the check
		}
	case Update:
		return map[string]Limit{"id": {Minimum: 1}, "text": {MinLength: 1}}
	case Delete:
		return map[string]Limit{"ids": {MinItems: 1, MaxItems: api.MaxDeleteIDs, ItemMinimum: 1}}
	case List:
		return map[string]Limit{"limit": {Minimum: 1, Maximum: api.MaxListSize, Default: api.DefaultListSize}}
	case Context:
		return map[string]Limit{
			"max_tokens": {Minimum: 1, Maximum: api.MaxContextTokens, Default: api.DefaultContextTokens},
			"min_score":  {Maximum: 1},
		}
	}
	return nil
}

// httpRequests are the HTTP API's request types (package api's JSON).
var httpRequests = map[string]reflect.Type{
	Search:  reflect.TypeFor[api.SearchRequest](),
	Get:     reflect.TypeFor[api.GetRequest](),
	Add:     reflect.TypeFor[api.AddRequest](),
	Update:  reflect.TypeFor[api.UpdateRequest](),
	Delete:  reflect.TypeFor[api.DeleteRequest](),
	List:    reflect.TypeFor[api.ListRequest](),
	Context: reflect.TypeFor[api.ContextRequest](),
	Stats:   reflect.TypeFor[struct{}](),
}

// timeSchema is how times travel in JSON: RFC 3339 text.
var timeSchema = &jsonschema.Schema{Type: "string", Format: "date-time"}

// HTTP returns the JSON Schema of the HTTP API's request body for request
// (one of Requests), with its limits.
func HTTP(request string) (*jsonschema.Schema, error) {
	t, ok := httpRequests[request]
	if !ok {
		return nil, fmt.Errorf("schema: unknown request %q", request)
	}
	return For(t, request)
}

// For returns the JSON Schema of Go type t (a struct) with the limits of
// request applied: plain "array" and "object" types (no "null"), integer
// ids from 1, no additional properties.
func For(t reflect.Type, request string) (*jsonschema.Schema, error) {
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{
		TypeSchemas: map[reflect.Type]*jsonschema.Schema{reflect.TypeFor[time.Time](): timeSchema},
	})
	if err != nil {
		return nil, fmt.Errorf("schema: %s: %w", request, err)
	}
	if s.Properties == nil {
		s.Properties = map[string]*jsonschema.Schema{}
	}
	s.Required = nonNil(s.Required)
	limits := Limits(request)
	for name, p := range s.Properties {
		apply(p, limits[name])
		if p.Items != nil && p.Items.Type == "object" {
			for sub, q := range p.Items.Properties {
				apply(q, limits[name+"."+sub])
			}
			p.Items.Required = nonNil(p.Items.Required)
		}
	}
	return s, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	sort.Strings(s)
	return s
}

// apply sets l on p and makes p's type plain: a Go slice or pointer
// infers ["null", T], which callers such as the MCP Inspector cannot fill.
func apply(p *jsonschema.Schema, l Limit) {
	if len(p.Types) > 0 {
		for _, t := range p.Types {
			if t != "null" {
				p.Type = t
			}
		}
		p.Types = nil
	}
	if p.Items != nil {
		apply(p.Items, Limit{Minimum: l.ItemMinimum})
	}
	// Unsigned Go integers infer minimum 0; ids start at 1.
	if l.Minimum != 0 {
		p.Minimum = ptr(l.Minimum)
	}
	if l.Maximum != 0 {
		p.Maximum = ptr(l.Maximum)
	}
	if l.MinItems != 0 {
		p.MinItems = ptr(l.MinItems)
	}
	if l.MaxItems != 0 {
		p.MaxItems = ptr(l.MaxItems)
	}
	if l.MinLength != 0 {
		p.MinLength = ptr(l.MinLength)
	}
	if l.MaxLength != 0 {
		p.MaxLength = ptr(l.MaxLength)
	}
	if l.Default != nil {
		b, err := json.Marshal(l.Default)
		if err == nil {
			p.Default = b
		}
	}
}

func ptr[T any](v T) *T { return &v }
