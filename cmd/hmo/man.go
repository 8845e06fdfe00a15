package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

func newManCmd(env *env) *cobra.Command {
	return &cobra.Command{
		Use:   "man [DIR]",
		Short: "write the manual pages (hmo.1, hmo-add.1, ...) into DIR (default ./man)",
		Example: `  hmo man /usr/local/share/man/man1
  hmo man && man ./man/hmo-recall.1`,
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "man"
			switch len(args) {
			case 0:
			case 1:
				dir = args[0]
			default:
				return usageError{"man takes at most one directory"}
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			root := cmd.Root()
			root.DisableAutoGenTag = true
			hdr := &doc.GenManHeader{Title: "HMO", Section: "1", Source: "hmo " + buildVersion(), Manual: "hmo manual"}
			if err := doc.GenManTree(root, hdr, dir); err != nil {
				return err
			}
			fmt.Fprintf(env.stdout, "manual pages written to %s\n", dir)
			return nil
		},
	}
}
