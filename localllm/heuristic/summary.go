package heuristic

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hmo-dev/hmo/localllm/internal/textcut"
)

// Constants of Summarize.
const (
	// summaryLeadBonus is the salience added to the first sentence of a
	// text, in points of the importance scorer's linear score: the opening
	// sentence of a document tends to state its topic.
	summaryLeadBonus = 1.0
	// summaryMargin is how far below the most salient sentence, in points
	// of the linear score, a sentence may fall and still be kept: about a
	// dated fact with a name. Weaker sentences (small talk around the
	// facts) are left out even when they would fit.
	summaryMargin = 3.0
	// summaryHeadLines is the number of leading lines of code or a list
	// that Summarize keeps first, with the headers.
	summaryHeadLines = 3
)

// Summarize returns an extractive summary of text of at most maxRunes
// runes: the fallback for the compressed representation of long content
// (HMO Eq. 2) when no language model is at hand. It is deterministic, safe
// for concurrent use, and never cuts a word in half.
//
// A text that fits is returned as it is. Prose is split into sentences;
// each gets the importance scorer's linear score as its salience (content
// words, facts, names, dates; greetings and filler count for nothing), and
// the first sentence with a content word gets 1 point more. The most
// salient sentences that fit are kept, in their original order, joined by
// spaces, with their runs of white space shortened to one space.
// Sentences without a content word, and those more than 3 points below
// the most salient one (small talk around the facts), are left out even
// when they would fit.
//
// Code and lists (at least three non-blank lines, half or more of them
// indented, list items, headers, or ending in a bracket, comma or
// semicolon) are summarised by whole lines instead: the headers (Markdown
// headings, unindented lines ending with ':' or '{') and the first three
// lines, then the lines after them in order while they fit. Blank lines
// are dropped.
//
// When not even one sentence or line fits, the best one is cut after its
// last whole word that fits, with "…" appended; when not even its first
// word fits, the summary is empty. Invalid UTF-8 is replaced by U+FFFD.
func Summarize(text string, maxRunes int) string {
	if maxRunes <= 0 {
		return ""
	}
	text = strings.ToValidUTF8(text, "\uFFFD")
	if utf8.RuneCountInString(text) <= maxRunes {
		return text
	}
	if lines := strings.Split(text, "\n"); isStructured(lines) {
		return summarizeLines(lines, maxRunes)
	}
	return summarizeProse(text, maxRunes)
}

// unit is a sentence or line that a summary may keep.
type unit struct {
	text  string
	runes int
	score float64
	order int
}

// pick keeps the units of highest score that fit in maxRunes together,
// one separator between two, and joins them in their original order. A
// unit that does not fit is skipped, or ends the choice when stop says so.
// With none kept, it cuts the best unit at a word boundary.
func pick(units []unit, maxRunes int, sep string, stop func(unit) bool) string {
	ranked := slices.Clone(units)
	slices.SortStableFunc(ranked, func(a, b unit) int { return cmp.Compare(b.score, a.score) })
	var kept []unit
	used := 0
	for _, u := range ranked {
		cost := u.runes
		if len(kept) > 0 {
			cost += utf8.RuneCountInString(sep)
		}
		if used+cost > maxRunes {
			if stop != nil && stop(u) {
				break
			}
			continue
		}
		kept = append(kept, u)
		used += cost
	}
	if len(kept) == 0 {
		return textcut.CutWords(strings.TrimSpace(ranked[0].text), maxRunes)
	}
	slices.SortFunc(kept, func(a, b unit) int { return cmp.Compare(a.order, b.order) })
	parts := make([]string, len(kept))
	for i, u := range kept {
		parts[i] = u.text
	}
	return strings.Join(parts, sep)
}

// summarizeProse keeps the most salient sentences.
func summarizeProse(text string, maxRunes int) string {
	lx := lex(text)
	weights := defaultWeights()
	var units []unit
	for i, s := range lx.sents {
		ts := lx.tokens[s.tok0:s.tok1]
		cls := make([]lexClass, len(ts))
		for j, t := range ts {
			cls[j] = classify(t.word)
		}
		score, content := sentenceSalience(ts, cls, s.question, weights)
		if content == 0 {
			continue
		}
		if len(units) == 0 {
			score += summaryLeadBonus
		}
		st := strings.Join(strings.Fields(text[s.start:s.end]), " ")
		units = append(units, unit{text: st, runes: utf8.RuneCountInString(st), score: score, order: i})
	}
	if len(units) == 0 { // only filler: the text's own words, cut to fit
		return textcut.CutWords(strings.Join(strings.Fields(text), " "), maxRunes)
	}
	best := slices.MaxFunc(units, func(a, b unit) int { return cmp.Compare(a.score, b.score) }).score
	units = slices.DeleteFunc(units, func(u unit) bool { return u.score < best-summaryMargin })
	return pick(units, maxRunes, " ", nil)
}

// sentenceSalience is the linear score of one sentence (without the bias)
// and its number of content words.
func sentenceSalience(ts []hToken, cls []lexClass, question bool, weights featureVec) (float64, int) {
	v, content := sentenceFeatures(ts, cls, nil, nil)
	v[FeatureDensity] = math.Log1p(float64(content))
	if question {
		v[FeatureQuestion] = 1
	}
	var s float64
	for f := range numFeatures {
		s += weights[f] * math.Min(v[f], featureTable[f].cap)
	}
	return s, content
}

// summarizeLines keeps the headers and first lines of code or a list, then
// the lines after them while they fit.
func summarizeLines(lines []string, maxRunes int) string {
	var units []unit
	for i, l := range lines {
		l = strings.TrimRightFunc(l, unicode.IsSpace)
		if strings.TrimSpace(l) == "" {
			continue
		}
		score := -float64(i) // later lines last
		if len(units) < summaryHeadLines || isHeader(l) {
			score += float64(len(lines)) + 1 // before every other line
		}
		units = append(units, unit{text: l, runes: utf8.RuneCountInString(l), score: score, order: i})
	}
	if len(units) == 0 {
		return ""
	}
	// Head lines that do not fit are skipped; the first other line that
	// does not fit ends the summary, so that it does not skip about inside
	// a block.
	return pick(units, maxRunes, "\n", func(u unit) bool { return u.score <= 0 })
}

// isStructured reports whether lines look like code or a list: at least
// three non-blank lines, half or more of them code-like or list items.
func isStructured(lines []string) bool {
	n, structured := 0, 0
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n++
		if isCodeOrItem(l) {
			structured++
		}
	}
	return n >= 3 && 2*structured >= n
}

// isCodeOrItem reports whether a line looks like code, a list item or a
// header.
func isCodeOrItem(l string) bool {
	if strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "  ") || isHeader(l) || isItem(l) {
		return true
	}
	t := strings.TrimRightFunc(l, unicode.IsSpace)
	for _, suffix := range []string{"{", "}", ";", "(", ")", "[", "]", ","} {
		if strings.HasSuffix(t, suffix) {
			return true
		}
	}
	return strings.HasPrefix(t, "//") || strings.HasPrefix(t, "```")
}

// isHeader reports whether a line heads a section: a Markdown heading, or
// an unindented line that opens a block (ends with ':' or '{').
func isHeader(l string) bool {
	t := strings.TrimRightFunc(l, unicode.IsSpace)
	if t == "" || unicode.IsSpace(rune(t[0])) {
		return false
	}
	return strings.HasPrefix(t, "#") || strings.HasSuffix(t, ":") || strings.HasSuffix(t, "{")
}

// isItem reports whether a line is a list item: "-", "*", "+", "•" or a
// number with "." or ")" before a space.
func isItem(l string) bool {
	t := strings.TrimLeftFunc(l, unicode.IsSpace)
	for _, m := range []string{"- ", "* ", "+ ", "• "} {
		if strings.HasPrefix(t, m) {
			return true
		}
	}
	i := 0
	for i < len(t) && '0' <= t[i] && t[i] <= '9' {
		i++
	}
	return i > 0 && i+1 < len(t) && (t[i] == '.' || t[i] == ')') && t[i+1] == ' '
}
