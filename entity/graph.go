package entity

import (
	"math"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// Options configure a Graph. Zero values mean the defaults.
type Options struct {
	// MaxShare is the largest share of a scope's records an entity may be
	// mentioned in and still link them: an entity in more (the speakers'
	// own names, "today") is a hub that says nothing about a pair of
	// records. Default DefaultMaxShare.
	MaxShare float64
	// MinHub is the document frequency below which an entity always
	// links, whatever MaxShare says (small scopes). Default DefaultMinHub.
	MinHub int
}

// Defaults of Options.
const (
	DefaultMaxShare = 0.05
	DefaultMinHub   = 8
)

// Graph is the entity graph of a store: entities per scope (normalised
// keys, aliases resolved), provenance edges from each entity to the
// records mentioning it, and co-occurrence through shared records. It is
// safe for concurrent use.
type Graph struct {
	o Options

	mu     sync.RWMutex      // guards the fields below
	scopes map[string]*scope // by scope name
	recs   map[uint64]recEntry
}

type recEntry struct {
	scope    string
	mentions []Mention
}

// scope is one scope's entities.
type scope struct {
	n     int // records with at least one mention
	nodes map[string]*node
	// alias maps a key to its canonical key; rebuilt when dirty.
	alias map[string]string
	group map[string][]string // canonical key -> every key it stands for
	dirty bool
}

type node struct {
	kind  Kind
	recs  map[uint64]struct{} // provenance
	inner int                 // records mentioning it not only at a sentence start
}

// New returns an empty graph with options o (nil means defaults).
func New(o *Options) *Graph {
	c := Options{}
	if o != nil {
		c = *o
	}
	if c.MaxShare <= 0 {
		c.MaxShare = DefaultMaxShare
	}
	if c.MinHub <= 0 {
		c.MinHub = DefaultMinHub
	}
	return &Graph{o: c, scopes: map[string]*scope{}, recs: map[uint64]recEntry{}}
}

// Add records that record id of scope sc mentions ms, replacing what an
// earlier Add said of id.
func (g *Graph) Add(id uint64, sc string, ms []Mention) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.remove(id)
	if len(ms) == 0 {
		return
	}
	s := g.scopes[sc]
	if s == nil {
		s = &scope{nodes: map[string]*node{}}
		g.scopes[sc] = s
	}
	ms = append([]Mention(nil), ms...)
	g.recs[id] = recEntry{scope: sc, mentions: ms}
	s.n++
	for _, m := range ms {
		nd := s.nodes[m.Key]
		if nd == nil {
			nd = &node{kind: m.Kind, recs: map[uint64]struct{}{}}
			s.nodes[m.Key] = nd
			s.dirty = true
		}
		nd.recs[id] = struct{}{}
		if !m.Initial {
			if nd.inner == 0 {
				s.dirty = true
			}
			nd.inner++
		}
	}
}

// Remove drops record id and every entity only it mentioned: no key of a
// forgotten record stays in the graph unless another record mentions it.
func (g *Graph) Remove(id uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.remove(id)
}

func (g *Graph) remove(id uint64) {
	e, ok := g.recs[id]
	if !ok {
		return
	}
	delete(g.recs, id)
	s := g.scopes[e.scope]
	s.n--
	for _, m := range e.mentions {
		nd := s.nodes[m.Key]
		delete(nd.recs, id)
		if !m.Initial {
			nd.inner--
			if nd.inner == 0 {
				s.dirty = true
			}
		}
		if len(nd.recs) == 0 {
			delete(s.nodes, m.Key)
			s.dirty = true
		}
	}
	if s.n == 0 {
		delete(g.scopes, e.scope)
	}
}

// Len is the number of records with at least one mention.
func (g *Graph) Len() int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return len(g.recs)
}

// Entities returns the mentions of record id (nil for none).
func (g *Graph) Entities(id uint64) []Mention {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return append([]Mention(nil), g.recs[id].mentions...)
}

// Keys returns the entity keys of scope sc, sorted.
func (g *Graph) Keys(sc string) []string {
	g.mu.RLock()
	defer g.mu.RUnlock()
	s := g.scopes[sc]
	if s == nil {
		return nil
	}
	out := make([]string, 0, len(s.nodes))
	for k := range s.nodes {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Resolve returns the canonical key of key in scope sc: the full name a
// short form stands for ("mel" -> "melanie", "melanie" -> "melanie
// smith" when that is the only longer name it starts), the key itself
// otherwise. Keys are normalised as Extract writes them.
func (g *Graph) Resolve(sc, key string) string {
	s := g.scopeFresh(sc)
	if s == nil {
		return key
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	if c, ok := s.alias[key]; ok {
		return c
	}
	return key
}

// Records returns the records that mention key or any of its aliases in
// scope sc, newest first.
func (g *Graph) Records(sc, key string) []uint64 {
	s := g.scopeFresh(sc)
	if s == nil {
		return nil
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	c := key
	if a, ok := s.alias[key]; ok {
		c = a
	}
	set := map[uint64]struct{}{}
	for _, k := range s.keysOf(c) {
		if nd := s.nodes[k]; nd != nil {
			for id := range nd.recs {
				set[id] = struct{}{}
			}
		}
	}
	return sortedIDs(set)
}

// Edge is an entity linked to another, with the number of records that
// mention both.
type Edge struct {
	Key   string
	Count int
}

// CoOccurring returns up to n entities mentioned in the same records as
// key in scope sc, most shared records first (ties by key).
func (g *Graph) CoOccurring(sc, key string, n int) []Edge {
	cnt := map[string]int{}
	for _, id := range g.Records(sc, key) {
		g.mu.RLock()
		ms := g.recs[id].mentions
		g.mu.RUnlock()
		seen := map[string]bool{}
		for _, m := range ms {
			c := g.Resolve(sc, m.Key)
			if c == g.Resolve(sc, key) || seen[c] {
				continue
			}
			seen[c] = true
			cnt[c]++
		}
	}
	out := make([]Edge, 0, len(cnt))
	for k, c := range cnt {
		out = append(out, Edge{Key: k, Count: c})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Key < out[j].Key
	})
	return out[:min(n, len(out))]
}

// Link is a record reached from a seed record through shared entities.
type Link struct {
	ID uint64
	// Weight in (0, 1] is the share of the seed's entity mass (each
	// entity weighing its inverse document frequency) the record shares.
	Weight float64
}

// Related returns, for each seed, up to fanout records of the same scope
// sharing an entity with it, heaviest first (ties: newer first). Hubs
// (entities in more than MaxShare of the scope's records), names seen
// only at sentence starts, and the seeds themselves are left out.
func (g *Graph) Related(seeds []uint64, fanout int) [][]Link {
	out := make([][]Link, len(seeds))
	if fanout <= 0 {
		return out
	}
	g.freshen(seeds)
	g.mu.RLock()
	defer g.mu.RUnlock()
	isSeed := make(map[uint64]bool, len(seeds))
	for _, id := range seeds {
		isSeed[id] = true
	}
	for i, id := range seeds {
		e, ok := g.recs[id]
		if !ok {
			continue
		}
		s := g.scopes[e.scope]
		acc := map[uint64]float64{}
		var mass float64
		g.linking(e, false, func(keys []string) {
			recs := map[uint64]struct{}{}
			for _, k := range keys {
				for r := range s.nodes[k].recs {
					recs[r] = struct{}{}
				}
			}
			idf := math.Log(1 + float64(s.n)/float64(len(recs)))
			mass += idf
			for r := range recs {
				if !isSeed[r] {
					acc[r] += idf
				}
			}
		})
		if mass == 0 {
			continue
		}
		links := make([]Link, 0, len(acc))
		for r, w := range acc {
			links = append(links, Link{ID: r, Weight: w / mass})
		}
		sort.Slice(links, func(a, b int) bool {
			if links[a].Weight != links[b].Weight {
				return links[a].Weight > links[b].Weight
			}
			return links[a].ID > links[b].ID
		})
		out[i] = links[:min(fanout, len(links))]
	}
	return out
}

// freshen brings the aliases of the scopes of ids up to date.
func (g *Graph) freshen(ids []uint64) {
	for _, id := range ids {
		g.mu.RLock()
		e, ok := g.recs[id]
		g.mu.RUnlock()
		if ok {
			g.scopeFresh(e.scope)
		}
	}
}

// linking calls fn with the present keys of each entity of e that links
// records: each canonical entity once, seen inside a sentence somewhere,
// no hub of the scope (its keys' mentions counted); names only when
// namesOnly. The caller holds the read lock and has freshened e's scope.
func (g *Graph) linking(e recEntry, namesOnly bool, fn func(keys []string)) {
	s := g.scopes[e.scope]
	hub := max(g.o.MinHub, int(g.o.MaxShare*float64(s.n)))
	done := map[string]bool{}
	for _, m := range e.mentions {
		if namesOnly && m.Kind != Name {
			continue
		}
		c := m.Key
		if a, ok := s.alias[c]; ok {
			c = a
		}
		if done[c] {
			continue
		}
		done[c] = true
		var keys []string
		inner, df := 0, 0
		for _, k := range s.keysOf(c) {
			if nd := s.nodes[k]; nd != nil {
				keys = append(keys, k)
				inner += nd.inner
				df += len(nd.recs)
			}
		}
		if inner > 0 && df <= hub {
			fn(keys)
		}
	}
}

// keysOf returns the keys canonical key c stands for (c itself when it
// has no aliases).
func (s *scope) keysOf(c string) []string {
	if ks, ok := s.group[c]; ok {
		return ks
	}
	return []string{c}
}

// scopeFresh returns scope sc with its aliases up to date.
func (g *Graph) scopeFresh(sc string) *scope {
	g.mu.RLock()
	s := g.scopes[sc]
	dirty := s != nil && s.dirty
	g.mu.RUnlock()
	if !dirty {
		return s
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if s = g.scopes[sc]; s != nil && s.dirty {
		s.resolveAliases()
	}
	return s
}

// maxShortShare is the longest a short form may be, as a share of the
// name it shortens: "Mel" (3 of 7) and "Chris" (5 of 11) are short
// forms, "Maria" (5 of 7) is a name of its own beside "Mariana".
const maxShortShare = 0.6

// resolveAliases maps each short form to the one name it stands for: a
// single word of at least three letters, at most maxShortShare of the
// name's length, that starts exactly one longer single-word name ("mel"
// -> "melanie"), or a single word that is the
// first word of exactly one multi-word name ("melanie" -> "melanie
// smith"). Names seen only at sentence starts take no part. The caller
// holds the write lock.
func (s *scope) resolveAliases() {
	var names []string
	for k, nd := range s.nodes {
		if nd.kind == Name && nd.inner > 0 {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	s.alias = map[string]string{}
	s.group = map[string][]string{}
	for k, nd := range s.nodes {
		if nd.kind != Name || strings.Contains(k, " ") {
			continue
		}
		c := ""
		if n := utf8.RuneCountInString(k); n >= 3 {
			c = uniqueWithPrefix(names, k, func(long string) bool {
				return !strings.Contains(long, " ") && float64(n) <= maxShortShare*float64(utf8.RuneCountInString(long))
			})
		}
		if c == "" {
			c = uniqueWithPrefix(names, k+" ", func(string) bool { return true })
		}
		if c != "" {
			s.alias[k] = c
		}
	}
	// Chains ("mel" -> "melanie" -> "melanie smith") end at the last name.
	for k, c := range s.alias {
		for i := 0; i < 4; i++ {
			n, ok := s.alias[c]
			if !ok {
				break
			}
			c = n
		}
		s.alias[k] = c
	}
	for k, c := range s.alias {
		if len(s.group[c]) == 0 {
			s.group[c] = []string{c}
		}
		s.group[c] = append(s.group[c], k)
	}
	for _, ks := range s.group {
		sort.Strings(ks[1:])
	}
	s.dirty = false
}

// uniqueWithPrefix returns the one name of sorted names longer than p
// that starts with p and passes ok, or "" when there is none or several.
func uniqueWithPrefix(names []string, p string, ok func(string) bool) string {
	i := sort.SearchStrings(names, p)
	found := ""
	for ; i < len(names) && strings.HasPrefix(names[i], p); i++ {
		if names[i] == p || !ok(names[i]) {
			continue
		}
		if found != "" {
			return ""
		}
		found = names[i]
	}
	return found
}

func sortedIDs(set map[uint64]struct{}) []uint64 {
	out := make([]uint64, 0, len(set))
	for id := range set {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] > out[j] })
	return out
}

// Specific returns, for each id, how many specific entities the record
// mentions: names (not dates) seen inside a sentence somewhere, that are
// no hub of its scope (see Related). A record naming a band, a book or a
// town says something particular; small talk names nobody but the
// speakers, who are hubs.
func (g *Graph) Specific(ids []uint64) []int {
	g.freshen(ids)
	g.mu.RLock()
	defer g.mu.RUnlock()
	out := make([]int, len(ids))
	for i, id := range ids {
		if e, ok := g.recs[id]; ok {
			g.linking(e, true, func([]string) { out[i]++ })
		}
	}
	return out
}

// SpecificEntities returns, for each id, the specific entities the record
// mentions (as Specific counts them), each as the keys that stand for it:
// its canonical key first, then its short forms.
func (g *Graph) SpecificEntities(ids []uint64) [][][]string {
	g.freshen(ids)
	g.mu.RLock()
	defer g.mu.RUnlock()
	out := make([][][]string, len(ids))
	for i, id := range ids {
		if e, ok := g.recs[id]; ok {
			g.linking(e, true, func(keys []string) { out[i] = append(out[i], keys) })
		}
	}
	return out
}
