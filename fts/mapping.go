package fts

import (
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/standard"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/mapping"
	index "github.com/blevesearch/bleve_index_api"
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

// bm25Fields are the scored fields in the order of the per-field arrays.
var bm25Fields = [nFields]string{fText: fieldText, fContext: fieldContext, fRole: fieldRole}

// newMapping builds the index mapping: text, context and role analysed by a, scope and
// session as exact keywords, time as a datetime, nothing stored, BM25
// scoring and no _all field.
func newMapping(a Analyzer) (*mapping.IndexMappingImpl, error) {
	im := mapping.NewIndexMapping()
	im.ScoringModel = index.BM25Scoring
	im.IndexDynamic = false
	im.StoreDynamic = false
	im.DocValuesDynamic = false
	name := analyzerName(a)
	if a != AnalyzerStandard {
		err := im.AddCustomAnalyzer(name, map[string]any{
			"type":          custom.Name,
			"tokenizer":     unicode.Name,
			"token_filters": tokenFilters(a),
		})
		if err != nil {
			return nil, err
		}
	}
	im.DefaultAnalyzer = name
	im.DefaultField = fieldText

	text := mapping.NewTextFieldMapping()
	text.Analyzer = name
	unstored(text)

	dm := mapping.NewDocumentStaticMapping()
	dm.AddFieldMappingsAt(fieldText, text)
	for _, f := range []string{fieldContext, fieldRole} {
		m := mapping.NewTextFieldMapping()
		m.Analyzer = name
		unstored(m)
		dm.AddFieldMappingsAt(f, m)
	}
	dm.AddFieldMappingsAt(fieldScope, keywordField())
	dm.AddFieldMappingsAt(fieldSession, keywordField())
	tm := mapping.NewDateTimeFieldMapping()
	unstored(tm)
	dm.AddFieldMappingsAt(fieldTime, tm)
	dl := mapping.NewTextFieldMapping()
	dl.Analyzer = keyword.Name
	unstored(dl)
	dl.Index = false
	dl.Store = true
	dm.AddFieldMappingsAt(fieldLengths, dl)
	dm.AddSubDocumentMapping("_all", mapping.NewDocumentDisabledMapping())
	im.DefaultMapping = dm
	return im, im.Validate()
}

// keywordField is an exact-match filter field: no scoring data.
func keywordField() *mapping.FieldMapping {
	f := mapping.NewKeywordFieldMapping()
	f.Analyzer = keyword.Name
	f.SkipFreqNorm = true
	unstored(f)
	return f
}

// unstored turns off everything a field does beyond being searchable.
func unstored(f *mapping.FieldMapping) {
	f.Store = false
	f.IncludeTermVectors = false
	f.IncludeInAll = false
	f.DocValues = false
}
