package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func newVersionCmd(env *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version [flags]",
		Short: "print the version",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if asJSON {
				return writeJSON(env, struct {
					Version string `json:"version"`
					Go      string `json:"go"`
				}{buildVersion(), runtime.Version()})
			}
			fmt.Fprintf(env.stdout, "hmo %s\n", buildVersion())
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: {version, go}")
	return cmd
}

// buildVersion is the module version hmo was built from.
func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
