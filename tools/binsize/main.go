// Command binsize attributes the bytes of a Go binary to packages or
// modules, for the binary-size section of BENCHMARKS.md. The binary must
// keep its symbol table (built without -ldflags "-s -w"):
//
//	CGO_ENABLED=0 go build -trimpath -o bin/hmo-syms ./cmd/hmo
//	go run ./tools/binsize -by module bin/hmo-syms
//
// It sums the sizes of the symbols in the file's loaded sections (code,
// read-only data, data; .bss and .noptrbss take no file space) by the
// package path in the symbol's name. The sums leave out what the linker
// does not size per symbol: .gopclntab (about 0.8 bytes per byte of code
// here), string data and type names, so a package's share of the file is
// roughly twice its sum.
//
// With -why it says instead why the linker kept a symbol, from the
// linker's dependency dump (whydeadcode's question):
//
//	CGO_ENABLED=0 go build -trimpath -gcflags=-dwarf=false -ldflags=-dumpdep -o /tmp/hmo ./cmd/hmo 2> /tmp/deps.txt
//	go run ./tools/binsize -why text/template /tmp/deps.txt
//	go run ./tools/binsize -why reflectmethod /tmp/deps.txt
//
// (-gcflags=-dwarf=false only gives the build a compile action of its own:
// cmd/go caches the linker's output with the main package's compile
// action and prints the dump again at the next build sharing it.)
// It prints the chain from the first reachable symbol whose name contains
// the argument back to the entry point. "reflectmethod" asks for the
// functions that call reflect.Value.Method or MethodByName: one of them
// reachable keeps every exported method of every type in an interface
// (cmd/hmo's TestLinkKeepsNoReflectMethod keeps hmo free of them).
package main

import (
	"cmp"
	"debug/elf"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/hmo-dev/hmo/internal/linkdeps"
)

func main() {
	by := flag.String("by", "package", "group by package or module")
	top := flag.Int("n", 40, "rows to print")
	why := flag.String("why", "", "print why the linker kept the first symbol containing this (\"reflectmethod\": the functions that disable method dead-code elimination); the argument is a -ldflags=-dumpdep dump")
	flag.Parse()
	if *why != "" {
		if flag.NArg() != 1 {
			fmt.Fprintln(os.Stderr, "usage: binsize -why SUBSTRING|reflectmethod DUMPDEP-FILE")
			os.Exit(2)
		}
		if err := explain(os.Stdout, flag.Arg(0), *why); err != nil {
			fmt.Fprintln(os.Stderr, "binsize:", err)
			os.Exit(1)
		}
		return
	}
	if flag.NArg() != 1 || (*by != "package" && *by != "module") {
		fmt.Fprintln(os.Stderr, "usage: binsize [-by package|module] [-n rows] BINARY")
		os.Exit(2)
	}
	sums, total, err := sizes(flag.Arg(0), *by == "module")
	if err != nil {
		fmt.Fprintln(os.Stderr, "binsize:", err)
		os.Exit(1)
	}
	type row struct {
		name string
		n    int64
	}
	rows := make([]row, 0, len(sums))
	for k, v := range sums {
		rows = append(rows, row{k, v})
	}
	slices.SortFunc(rows, func(a, b row) int { return cmp.Or(cmp.Compare(b.n, a.n), strings.Compare(a.name, b.name)) })
	fmt.Printf("%-56s %10.2f MB\n", "all sized symbols", float64(total)/1e6)
	for _, r := range rows[:min(*top, len(rows))] {
		fmt.Printf("%-56s %10.2f MB\n", r.name, float64(r.n)/1e6)
	}
}

// explain prints, from the dump at path, the chain that kept the first
// symbol containing what, or every function marked <ReflectMethod> with
// the chain of the first.
func explain(w io.Writer, path, what string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	g, err := linkdeps.Read(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	sym := ""
	if what == "reflectmethod" {
		fs := g.ReflectMethod()
		if len(fs) == 0 {
			fmt.Fprintln(w, "no reachable function calls reflect.Value.Method or MethodByName")
			return nil
		}
		fmt.Fprintf(w, "%d reachable functions call reflect.Value.Method or MethodByName:\n  %s\n\n", len(fs), strings.Join(fs, "\n  "))
		sym = fs[0]
	} else if sym = g.Match(what); sym == "" {
		fmt.Fprintf(w, "no reachable symbol contains %q\n", what)
		return nil
	}
	fmt.Fprintf(w, "%s\n", strings.Join(g.Why(sym), "\n  <- "))
	return nil
}

// sizes sums symbol sizes by package (or module) of the ELF binary at path.
func sizes(path string, modules bool) (map[string]int64, int64, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w (built with -ldflags \"-s -w\"?)", path, err)
	}
	sums := map[string]int64{}
	var total int64
	for _, s := range syms {
		if s.Size == 0 || int(s.Section) <= 0 || int(s.Section) >= len(f.Sections) {
			continue
		}
		if sec := f.Sections[s.Section]; sec.Type == elf.SHT_NOBITS || sec.Flags&elf.SHF_ALLOC == 0 {
			continue
		}
		k := pkgOf(s.Name)
		if modules {
			k = moduleOf(k)
		}
		sums[k] += int64(s.Size)
		total += int64(s.Size)
	}
	return sums, total, nil
}

var (
	symPrefix = regexp.MustCompile(`^(type:\.(eq|hash|namedata)\.|type:|go:itab\.|go:)`)
	version   = regexp.MustCompile(`^v[0-9]+$`)
)

// pkgOf is the package path a symbol name starts with: up to the first
// dot after the last slash, generic arguments, receivers and an itab's
// interface dropped.
func pkgOf(name string) string {
	name = symPrefix.ReplaceAllString(name, "")
	name = strings.TrimLeft(name, "*(")
	if i := strings.IndexAny(name, "[, "); i >= 0 { // generic arguments, an itab's interface
		name = name[:i]
	}
	slash := strings.LastIndexByte(name, '/')
	if i := strings.IndexByte(name[slash+1:], '.'); i >= 0 {
		return name[:slash+1+i]
	}
	return name
}

// moduleOf maps a package path to its module, approximately: the
// standard library as "std", github.com/owner/repo[/vN], host/a/b
// elsewhere, and hmo's own packages one by one.
func moduleOf(pkg string) string {
	parts := strings.Split(pkg, "/")
	switch {
	case parts[0] == "vendor" || !strings.Contains(parts[0], "."):
		return "std"
	case pkg == "github.com/hmo-dev/hmo" || strings.HasPrefix(pkg, "github.com/hmo-dev/hmo/"):
		return pkg
	case parts[0] == "google.golang.org" && len(parts) >= 2:
		return strings.Join(parts[:2], "/")
	case len(parts) >= 4 && version.MatchString(parts[3]):
		return strings.Join(parts[:4], "/")
	case len(parts) >= 3:
		return strings.Join(parts[:3], "/")
	}
	return pkg
}
