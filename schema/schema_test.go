package schema_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/hmo-dev/hmo/api"
	"github.com/hmo-dev/hmo/schema"
)

// Every limit names a field of its request (a typo would constrain
// nothing), and reaches the schema.
func TestLimitsReachTheSchemas(t *testing.T) {
	for _, r := range schema.Requests {
		s, err := schema.HTTP(r)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		for name, l := range schema.Limits(r) {
			if r == schema.Add && name == "text" {
				continue // the MCP tool's single memory
			}
			props := doc["properties"].(map[string]any)
			if parent, sub, ok := strings.Cut(name, "."); ok {
				props = props[parent].(map[string]any)["items"].(map[string]any)["properties"].(map[string]any)
				name = sub
			}
			p, ok := props[name].(map[string]any)
			if !ok {
				t.Errorf("%s: limit on unknown field %q", r, name)
				continue
			}
			check := func(key string, want float64) {
				if want != 0 && p[key] != want {
					t.Errorf("%s.%s %s = %v, want %v", r, name, key, p[key], want)
				}
			}
			check("minimum", l.Minimum)
			check("maximum", l.Maximum)
			check("minItems", float64(l.MinItems))
			check("maxItems", float64(l.MaxItems))
			check("minLength", float64(l.MinLength))
			check("maxLength", float64(l.MaxLength))
			if l.ItemMinimum != 0 && p["items"].(map[string]any)["minimum"] != l.ItemMinimum {
				t.Errorf("%s.%s items = %v", r, name, p["items"])
			}
			if ty, ok := p["type"].(string); !ok || ty == "" {
				t.Errorf("%s.%s type = %v, want one plain type", r, name, p["type"])
			}
		}
	}
}

func TestHTTPSchemas(t *testing.T) {
	tests := []struct {
		request, field, key string
		want                any
	}{
		{schema.Search, "k", "maximum", float64(api.MaxSearchK)},
		{schema.Search, "max_tokens", "minimum", 1.0},
		{schema.Search, "from", "format", "date-time"},
		{schema.Get, "ids", "maxItems", float64(api.MaxGetIDs)},
		{schema.Get, "ids", "type", "array"},
		{schema.Delete, "ids", "maxItems", float64(api.MaxDeleteIDs)},
		{schema.Add, "memories", "maxItems", float64(api.MaxAddMemories)},
		{schema.List, "limit", "default", float64(api.DefaultListSize)},
		{schema.Context, "max_tokens", "maximum", float64(api.MaxContextTokens)},
	}
	for _, tt := range tests {
		s, err := schema.HTTP(tt.request)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(s.Properties[tt.field])
		var p map[string]any
		json.Unmarshal(b, &p)
		if !reflect.DeepEqual(p[tt.key], tt.want) {
			t.Errorf("%s.%s %s = %v, want %v", tt.request, tt.field, tt.key, p[tt.key], tt.want)
		}
	}
	if _, err := schema.HTTP("nope"); err == nil {
		t.Error("unknown request accepted")
	}
}
