package main

import "testing"

func TestPkgAndModule(t *testing.T) {
	tests := []struct{ sym, pkg, mod string }{
		{"runtime.mallocgc", "runtime", "std"},
		{"vendor/golang.org/x/text/unicode/norm.decomps", "vendor/golang.org/x/text/unicode/norm", "std"},
		{"github.com/blevesearch/zapx/v11.(*Segment).Fields", "github.com/blevesearch/zapx/v11", "github.com/blevesearch/zapx/v11"},
		{"type:*github.com/blevesearch/bleve/v2/index/scorch.Scorch", "github.com/blevesearch/bleve/v2/index/scorch", "github.com/blevesearch/bleve/v2"},
		{"go:itab.*github.com/hmo-dev/hmo/fts.Index,github.com/hmo-dev/hmo/engine.TextIndex", "github.com/hmo-dev/hmo/fts", "github.com/hmo-dev/hmo/fts"},
		{"slices.SortFunc[go.shape.struct { a/b.c }]", "slices", "std"},
		{"google.golang.org/protobuf/internal/impl.fieldCoder", "google.golang.org/protobuf/internal/impl", "google.golang.org/protobuf"},
		{"gopkg.in/yaml%2ev3.(*decoder).unmarshal", "gopkg.in/yaml%2ev3", "gopkg.in/yaml%2ev3"},
		{"go.etcd.io/bbolt.(*Tx).Commit", "go.etcd.io/bbolt", "go.etcd.io/bbolt"},
	}
	for _, tt := range tests {
		if got := pkgOf(tt.sym); got != tt.pkg {
			t.Errorf("pkgOf(%q) = %q, want %q", tt.sym, got, tt.pkg)
		}
		if got := moduleOf(pkgOf(tt.sym)); got != tt.mod {
			t.Errorf("moduleOf(pkgOf(%q)) = %q, want %q", tt.sym, got, tt.mod)
		}
	}
}
