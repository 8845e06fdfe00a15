// Package entity is H-Mem's entity graph (seed 000): entities extracted
// from records by rules and statistics, without a gazetteer or a model
// (capitalised spans that do not merely start a sentence; days and
// months named by time expressions, resolved against the record's date
// with the retrieve package's parser), normalised (case, possessives) and
// resolved to one canonical name per alias ("Mel" -> "Melanie");
// provenance edges from each entity to the records mentioning it; and
// co-occurrence through shared records. Related walks from seed records
// through shared entities to other records: the retrieval pipeline's
// multi-hop expansion stage.
//
// The package is pure: the engine stores each record's mentions (Encode)
// in bbolt in the record's own transaction, deletes them with it, and
// loads the graph from them on open.
package entity
