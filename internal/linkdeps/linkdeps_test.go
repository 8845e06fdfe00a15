package linkdeps

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// dump is the shape of go build -ldflags=-dumpdep's output.
const dump = `# example.com/cmd
_ -> _rt0_amd64_linux
_rt0_amd64_linux -> runtime.main
runtime.main -> text/template.ne.stkobj
runtime.main -> main.main
main.main -> text/template.(*Template).Execute
main.main -> fmt.Println
text/template.(*Template).Execute -> text/template.(*state).evalField <ReflectMethod>
text/template.(*state).evalField <ReflectMethod> -> reflect.Value.MethodByName
fmt.Println -> text/template.(*Template).Execute
main.main -> type:reflect.Value <UsedInIface>
type:reflect.Value <UsedInIface> -> reflect.(*Value).Method <ReflectMethod>
`

func TestGraph(t *testing.T) {
	g, err := Read(strings.NewReader(dump))
	if err != nil {
		t.Fatal(err)
	}
	if g.Len() != 10 {
		t.Errorf("Len = %d, want 10", g.Len())
	}
	if got, want := g.ReflectMethod(), []string{"text/template.(*state).evalField", "reflect.(*Value).Method"}; !slices.Equal(got, want) {
		t.Errorf("ReflectMethod = %q, want %q", got, want)
	}
	tests := []struct {
		sym  string
		want []string
	}{
		// the first edge to a symbol is the one that kept it, later ones are not
		{"text/template.(*Template).Execute", []string{"text/template.(*Template).Execute", "main.main", "runtime.main", "_rt0_amd64_linux", "_"}},
		{"reflect.Value.MethodByName", []string{"reflect.Value.MethodByName", "text/template.(*state).evalField", "text/template.(*Template).Execute", "main.main", "runtime.main", "_rt0_amd64_linux", "_"}},
		{"reflect.(*Value).Method", []string{"reflect.(*Value).Method", "type:reflect.Value", "main.main", "runtime.main", "_rt0_amd64_linux", "_"}},
		{"type:reflect.Value", []string{"type:reflect.Value", "main.main", "runtime.main", "_rt0_amd64_linux", "_"}},
		{"_rt0_amd64_linux", []string{"_rt0_amd64_linux", "_"}},
		{"encoding/gob.NewEncoder", nil},
	}
	for _, tt := range tests {
		if got := g.Why(tt.sym); !slices.Equal(got, tt.want) {
			t.Errorf("Why(%q) = %q, want %q", tt.sym, got, tt.want)
		}
	}
	for substr, want := range map[string]string{"evalField": "text/template.(*state).evalField", "text/template": "text/template.(*Template).Execute", "gob": ""} {
		if got := g.Match(substr); got != want {
			t.Errorf("Match(%q) = %q, want %q", substr, got, want)
		}
	}
}

func TestReadRefusesOtherInput(t *testing.T) {
	for _, in := range []string{"", "# example.com/cmd\n", "go: no such package\n"} {
		if _, err := Read(strings.NewReader(in)); !errors.Is(err, ErrNotDump) {
			t.Errorf("Read(%q) = %v, want ErrNotDump", in, err)
		}
	}
}

func TestCycleEnds(t *testing.T) {
	g, err := Read(strings.NewReader("a -> b\nb -> a\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Why("a"); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("Why(a) = %q, want [a b]", got)
	}
}
