package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/jsonl"
	"github.com/hmo-dev/hmo/locomo"
)

// importBatch is the number of records committed per transaction.
const importBatch = 1000

func runImport(ctx context.Context, env *env, args []string) (err error) {
	fs := newFlags(env, "import", "FILE (or - for stdin)")
	var sf storeFlags
	sf.register(fs)
	format := fs.String("format", "", "jsonl or locomo (default: from the file name, else jsonl)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{"import needs one file"}
	}
	name := fs.Arg(0)
	ins, err := readInputs(env, name, *format)
	if err != nil {
		return err
	}
	e, err := sf.open(env)
	if err != nil {
		return err
	}
	defer closeStore(e, &err)
	for i := range ins {
		if err := e.Validate(&ins[i]); err != nil {
			return fmt.Errorf("%s: record %d: %w (nothing imported)", name, i+1, err)
		}
	}
	p := newProgress(env, "import")
	for i := 0; i < len(ins); i += importBatch {
		if _, err := e.Remember(ctx, ins[i:min(i+importBatch, len(ins))]...); err != nil {
			return fmt.Errorf("%s: after %d records: %w", name, i, err)
		}
		p.update(min(i+importBatch, len(ins)), len(ins))
	}
	fmt.Fprintf(env.stdout, "imported %d record(s)\n", len(ins))
	sf.models.settle(ctx, env, e)
	return nil
}

func readInputs(env *env, name, format string) ([]engine.Input, error) {
	var r io.Reader = env.stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	if format == "" {
		format = "jsonl"
		if strings.HasSuffix(name, ".json") {
			format = "locomo"
		}
	}
	switch format {
	case "jsonl":
		ins, err := jsonl.Read(r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w (nothing imported)", name, err)
		}
		return ins, nil
	case "locomo":
		convs, err := locomo.Read(r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w (nothing imported)", name, err)
		}
		return locomoInputs(convs), nil
	}
	return nil, usageError{fmt.Sprintf("unknown format %q (want jsonl or locomo)", format)}
}

// locomoInputs flattens conversations into records, dated as
// locomo.Conversation.Inputs says.
func locomoInputs(convs []locomo.Conversation) []engine.Input {
	var out []engine.Input
	for i := range convs {
		for _, s := range convs[i].Inputs() {
			out = append(out, s.Inputs...)
		}
	}
	return out
}
