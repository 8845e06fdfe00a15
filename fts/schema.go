package fts

import (
	"encoding/json"
	"fmt"
	"time"
	"unsafe"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/standard"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/document"
	"github.com/blevesearch/bleve/v2/numeric"
	"github.com/blevesearch/bleve/v2/registry"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/hmo-dev/hmo/engine"
)

// Field names of an indexed document.
const (
	fieldText    = "text"    // the record's own text
	fieldContext = "context" // its context turns
	fieldRole    = "role"    // its speaker
	fieldScope   = "scope"
	fieldSession = "session"
	fieldTime    = "time"
	// fieldLengths holds the document's scored field lengths, stored and
	// not indexed, so that a delete or an update can take them off the
	// totals. It lives in the segments (written once, merged with them),
	// unlike bleve's internal values, which every persist rewrites whole.
	fieldLengths = "dl"
)

// Indexing options of the fields: searchable only (nothing stored, no term
// vectors, no doc values), keywords without frequencies and norms, and the
// lengths stored only.
const (
	optScored  = index.IndexField
	optKeyword = index.IndexField | index.SkipFreqNorm
	optTime    = index.IndexField
	optStored  = index.StoreField
)

// timeLayout is the layout bleve's mapping records with a time.Time value;
// the field is not stored, so it is never read back.
const timeLayout = time.RFC3339

// analyzerName is the name under which a's analysis is registered in the
// index mapping.
func analyzerName(a Analyzer) string {
	if a == AnalyzerStandard {
		return standard.Name
	}
	return "hmo_" + string(a)
}

// tokenFilters lists the token filters of a custom analyzer, in order.
func tokenFilters(a Analyzer) []any {
	switch a {
	case AnalyzerEnglish:
		return []any{en.PossessiveName, lowercase.Name, en.StopName, en.SnowballStemmerName}
	case AnalyzerEnglishKeepStop:
		return []any{en.PossessiveName, lowercase.Name, en.SnowballStemmerName}
	default: // AnalyzerPlain
		return []any{lowercase.Name}
	}
}

// customAnalyzer is the configuration of a's custom analyzer, nil for the
// standard one.
func customAnalyzer(a Analyzer) map[string]any {
	if a == AnalyzerStandard {
		return nil
	}
	return map[string]any{
		"type":          custom.Name,
		"tokenizer":     unicode.Name,
		"token_filters": tokenFilters(a),
	}
}

// analyzers are the analysis of a document's fields.
type analyzers struct {
	name    Analyzer          // the option they were built from
	text    analysis.Analyzer // text, context, role, and queries
	keyword analysis.Analyzer // scope, session, dl
}

// newAnalyzers builds the analyzers of an index with analyzer a, from
// bleve's registry as bleve's index mapping builds them.
func newAnalyzers(a Analyzer) (analyzers, error) {
	c := registry.NewCache()
	an := analyzers{name: a}
	var err error
	if cfg := customAnalyzer(a); cfg != nil {
		an.text, err = c.DefineAnalyzer(analyzerName(a), cfg)
	} else {
		an.text, err = c.AnalyzerNamed(analyzerName(a))
	}
	if err != nil {
		return an, fmt.Errorf("%w: analyzer %q: %w", ErrInvalidOption, a, err)
	}
	an.text = fastTokens(an.text) // bleve's tokens, ASCII without the segmenter
	if an.keyword, err = c.AnalyzerNamed(keyword.Name); err != nil {
		return an, fmt.Errorf("fts: keyword analyzer: %w", err)
	}
	return an, nil
}

// bm25Fields are the scored fields in the order of the per-field arrays.
var bm25Fields = [nFields]string{fText: fieldText, fContext: fieldContext, fRole: fieldRole}

// newDocument is the bleve document of d with its field lengths l: the
// fields bleve's index mapping (mappingJSON) makes of them. fq, when not
// nil, holds the scored fields' analysis (analyseForIndex), and then
// every indexed field comes analysed (preparedField); without it, bleve's
// own fields analyse their values.
//
// Empty Context, Role, Scope and Session are left out and a zero Time is
// not indexed; Text is always there.
func (an *analyzers) newDocument(d *engine.TextDoc, l *[nFields]uint32, fq *docFreqs) (*document.Document, error) {
	doc := document.NewDocument(docID(d.ID))
	var noPos []uint64
	for f, text := range docFields(d) {
		if text == "" && f != fText {
			continue
		}
		if fq != nil && fq[f] != nil {
			doc.AddField(newPreparedText(bm25Fields[f], len(text), fq[f]))
			continue
		}
		doc.AddField(document.NewTextFieldCustom(bm25Fields[f], noPos, []byte(text), optScored, an.text))
	}
	for _, kv := range [...]struct{ name, v string }{{fieldScope, d.Scope}, {fieldSession, d.Session}} {
		switch {
		case kv.v == "":
		case fq != nil:
			doc.AddField(newPreparedKeyword(kv.name, kv.v))
		default:
			doc.AddField(document.NewTextFieldCustom(kv.name, noPos, []byte(kv.v), optKeyword, an.keyword))
		}
	}
	if !d.Time.IsZero() {
		var f document.Field
		var err error
		if fq != nil {
			f, err = newPreparedTime(timeKey(d.Time))
		} else {
			f, err = document.NewDateTimeFieldWithIndexingOptions(fieldTime, noPos, timeKey(d.Time), timeLayout, optTime)
		}
		if err != nil {
			return nil, fmt.Errorf("fts: document %d: %w", d.ID, err)
		}
		doc.AddField(f)
	}
	doc.AddField(document.NewTextFieldCustom(fieldLengths, noPos, []byte(encodeDocLen(l)), optStored, an.keyword))
	doc.SetIndexed()
	return doc, nil
}

// preparedField is an indexed, unstored field analysed beforehand: its
// terms are what bleve's own field of the same type (text or datetime)
// and options would make of the value, and its Analyze does nothing.
// Bleve's fields analyse in its analysis workers, each field on its own:
// a text shared by two fields (a record's text is the next record's
// context) was counted twice, and the datetime field's 16 terms took some
// 70 small allocations. Its frequencies may be shared with other fields and
// are only read.
type preparedField struct {
	name  string
	typ   byte // bleve's encoded field type: 't' text, 'd' datetime
	opts  index.FieldIndexingOptions
	plain uint64 // NumPlainTextBytes, as bleve's field counts it
	*fieldFreqs
}

func newPreparedText(name string, plain int, fq *fieldFreqs) *preparedField {
	return &preparedField{name: name, typ: 't', opts: optScored, plain: uint64(plain), fieldFreqs: fq}
}

// newPreparedKeyword is the keyword field of v: one term, v itself,
// without frequency (the keyword analyzer and optKeyword).
// The field, its frequencies and its entry are one allocation, the term's
// bytes and the map two more (what newFieldFreqs makes of the one token).
func newPreparedKeyword(name, v string) *preparedField {
	pk := &preparedKeyword{}
	term := []byte(v)
	pk.tf.Term = term
	pk.fq = fieldFreqs{length: 1, freqs: index.TokenFrequencies{v: &pk.tf},
		size: sizeOfMap + sizeOfString + sizeOfPtr + 2*len(term) + sizeOfTokenFreq}
	pk.f = preparedField{name: name, typ: 't', opts: optKeyword, plain: uint64(len(v)), fieldFreqs: &pk.fq}
	return &pk.f
}

// preparedKeyword is what newPreparedKeyword allocates at once.
type preparedKeyword struct {
	f  preparedField
	fq fieldFreqs
	tf index.TokenFreq
}

// dateTimeShifts is the number of terms bleve's datetime field indexes
// for a time: its value prefix-coded at every shift of bleve's precision
// step, from 0 to 60.
const dateTimeShifts = 64 / document.DefaultDateTimePrecisionStep

// newPreparedTime is the datetime field of t with optTime: the terms of
// bleve's DateTimeField.Analyze (the value prefix-coded at shift 0, 4,
// ..., 60, each once, so each of frequency 1), counted as newFieldFreqs
// counts them. The field, its entries and the terms' bytes are one
// allocation, the map another.
func newPreparedTime(t time.Time) (*preparedField, error) {
	if t.Before(document.MinTimeRepresentable) || t.After(document.MaxTimeRepresentable) {
		return nil, fmt.Errorf("cannot represent %s in this type", t)
	}
	v := t.UnixNano()
	pt := &preparedTime{}
	pt.f = preparedField{name: fieldTime, typ: 'd', opts: optTime, plain: 8, fieldFreqs: &pt.fq}
	freqs := make(index.TokenFrequencies, dateTimeShifts)
	size := sizeOfMap
	rest := pt.terms[:]
	for i := range dateTimeShifts {
		var term []byte
		var err error
		term, rest, err = numeric.NewPrefixCodedInt64Prealloc(v, uint(i)*document.DefaultDateTimePrecisionStep, rest)
		if err != nil {
			return nil, err
		}
		term = term[:len(term):len(term)]
		tf := &pt.slab[i]
		tf.Term = term
		tf.SetFrequency(1)
		freqs[unsafe.String(unsafe.SliceData(term), len(term))] = tf
		size += sizeOfString + sizeOfPtr + 2*len(term) + sizeOfTokenFreq
	}
	pt.fq = fieldFreqs{length: int(dateTimeShifts), freqs: freqs, size: size}
	return &pt.f, nil
}

// preparedTime is what newPreparedTime allocates at once: the field, its
// frequencies, their entries and the terms' bytes (the 16 terms take 101).
type preparedTime struct {
	f     preparedField
	fq    fieldFreqs
	slab  [dateTimeShifts]index.TokenFreq
	terms [104]byte
}

func (f *preparedField) Name() string                                     { return f.name }
func (f *preparedField) ArrayPositions() []uint64                         { return nil }
func (f *preparedField) Options() index.FieldIndexingOptions              { return f.opts }
func (f *preparedField) Analyze()                                         {}
func (f *preparedField) Value() []byte                                    { return nil } // not stored
func (f *preparedField) NumPlainTextBytes() uint64                        { return f.plain }
func (f *preparedField) EncodedFieldType() byte                           { return f.typ }
func (f *preparedField) AnalyzedLength() int                              { return f.length }
func (f *preparedField) AnalyzedTokenFrequencies() index.TokenFrequencies { return f.freqs }

// Size is the memory the field holds, for bleve's statistics.
func (f *preparedField) Size() int { return int(unsafe.Sizeof(*f)) + len(f.name) + f.size }

// The index mapping in bleve's JSON form, kept in the index under bleve's
// mapping key so that bleve's own tools (and hmo builds that opened the
// index through bleve's top-level package) read the index as before. It
// describes what newDocument builds: text, context and role analysed by
// the index's analyzer, scope and session as exact keywords, time as a
// datetime, dl stored only, nothing else stored, BM25 scoring, no _all
// field and no dynamic fields.
type (
	bleveMapping struct {
		DefaultMapping        bleveDocMapping `json:"default_mapping"`
		TypeField             string          `json:"type_field"`
		DefaultType           string          `json:"default_type"`
		DefaultAnalyzer       string          `json:"default_analyzer"`
		DefaultDateTimeParser string          `json:"default_datetime_parser"`
		ScoringModel          string          `json:"scoring_model"`
		DefaultField          string          `json:"default_field"`
		StoreDynamic          bool            `json:"store_dynamic"`
		IndexDynamic          bool            `json:"index_dynamic"`
		DocValuesDynamic      bool            `json:"docvalues_dynamic"`
		Analysis              bleveAnalysis   `json:"analysis"`
	}
	bleveDocMapping struct {
		Enabled    bool                       `json:"enabled"`
		Dynamic    bool                       `json:"dynamic"`
		Properties map[string]bleveDocMapping `json:"properties,omitempty"`
		Fields     []bleveField               `json:"fields,omitempty"`
	}
	bleveField struct {
		Type         string `json:"type"`
		Analyzer     string `json:"analyzer,omitempty"`
		Store        bool   `json:"store,omitempty"`
		Index        bool   `json:"index,omitempty"`
		SkipFreqNorm bool   `json:"skip_freq_norm,omitempty"`
	}
	bleveAnalysis struct {
		Analyzers map[string]map[string]any `json:"analyzers,omitempty"`
	}
)

// mappingKey is the internal key under which bleve keeps its mapping.
var mappingKey = []byte("_mapping")

// mappingJSON is the index mapping of an index with analyzer a.
func mappingJSON(a Analyzer) ([]byte, error) {
	name := analyzerName(a)
	field := func(f bleveField) bleveDocMapping {
		return bleveDocMapping{Enabled: true, Dynamic: true, Fields: []bleveField{f}}
	}
	scored := field(bleveField{Type: "text", Analyzer: name, Index: true})
	kw := field(bleveField{Type: "text", Analyzer: keyword.Name, Index: true, SkipFreqNorm: true})
	m := bleveMapping{
		DefaultMapping: bleveDocMapping{Enabled: true, Properties: map[string]bleveDocMapping{
			"_all":       {},
			fieldText:    scored,
			fieldContext: scored,
			fieldRole:    scored,
			fieldScope:   kw,
			fieldSession: kw,
			fieldTime:    field(bleveField{Type: "datetime", Index: true}),
			fieldLengths: field(bleveField{Type: "text", Analyzer: keyword.Name, Store: true}),
		}},
		TypeField:             "_type",
		DefaultType:           "_default",
		DefaultAnalyzer:       name,
		DefaultDateTimeParser: "dateTimeOptional",
		ScoringModel:          index.BM25Scoring,
		DefaultField:          fieldText,
	}
	if cfg := customAnalyzer(a); cfg != nil {
		m.Analysis.Analyzers = map[string]map[string]any{name: cfg}
	}
	return json.Marshal(m)
}
