package main

import (
	"bufio"
	"os"

	"github.com/spf13/cobra"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/jsonl"
	"github.com/hmo-dev/hmo/markdown"
)

func newExportCmd(env *env) *cobra.Command {
	var sf storeFlags
	var out, format string
	cmd := &cobra.Command{
		Use:   "export [flags]",
		Short: "write every record as JSONL or Markdown",
		Example: `  hmo export > backup.jsonl
  hmo export --format markdown --out memories.md`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runExport(env, &sf, &out, &format) },
	}
	fs := cmd.Flags()
	sf.register(fs, withOllama)
	fs.StringVarP(&out, "out", "o", "", "write to this file (0600) instead of stdout")
	fs.StringVar(&format, "format", "jsonl", "jsonl (every field; import reads it back identically) or markdown (by scope and day, for reading and for agents' memory files)")
	return cmd
}

func runExport(env *env, sf *storeFlags, out, format *string) (err error) {
	if *format != "jsonl" && *format != "markdown" && *format != "md" {
		return usageError{"--format " + *format + ": want jsonl or markdown"}
	}
	e, err := sf.openRead(env)
	if err != nil {
		return err
	}
	defer closeStore(e, &err)
	w := env.stdout
	if *out != "" {
		f, err := os.OpenFile(*out, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return err
		}
		defer func() {
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}()
		w = f
	}
	bw := bufio.NewWriter(w)
	if *format == "jsonl" {
		jw := jsonl.NewWriter(bw)
		if err := e.Scan(func(r *engine.Record) error { return jw.Write(r) }); err != nil {
			return err
		}
		return bw.Flush()
	}
	var recs []engine.Record
	if err := e.Scan(func(r *engine.Record) error {
		recs = append(recs, engine.Record{ID: r.ID, Scope: r.Scope, Time: r.Time, Text: r.Text})
		return nil
	}); err != nil {
		return err
	}
	if err := markdown.Write(bw, recs); err != nil {
		return err
	}
	return bw.Flush()
}
