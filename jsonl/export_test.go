package jsonl

// ParseSimple and ParseJSON are the two decoders of Parse, for tests.
var (
	ParseSimple = parseSimple
	ParseJSON   = parseJSON
)
