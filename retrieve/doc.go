// Package retrieve is hmo's query path as a pipeline of named, pure stages
// over a candidate set: candidate generation (text, vector, structure),
// priors (speaker, time, session), fusion, propagation over a segment tree,
// and selection. It knows nothing of stores: the engine supplies
// candidates and record metadata through the small Source interface, and a
// segment tree through Structure, so every stage tests without a store.
//
// pipeline.go reads as the whole query path; each stage lives in a file of
// its own with its options. Stages are switched on and off by name
// (ParseStages) so evaluations can ablate them.
package retrieve
