package schema_test

import (
	"encoding/json"
	"testing"

	"github.com/hmo-dev/hmo/schema"
)

func TestHTTPSchemas(t *testing.T) {
	for _, r := range schema.Requests {
		s, err := schema.HTTP(r)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(s)
		t.Logf("%s: %s", r, b)
	}
}
