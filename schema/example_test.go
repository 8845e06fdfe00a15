package schema_test

import (
	"encoding/json"
	"fmt"

	"github.com/hmo-dev/hmo/schema"
)

func ExampleHTTP() {
	s, _ := schema.HTTP(schema.Get)
	b, _ := json.Marshal(s.Properties["ids"])
	fmt.Println(string(b))
	// Output:
	// {"type":"array","items":{"type":"integer","minimum":1},"minItems":1,"maxItems":50}
}
