package main

import (
	"context"
	"fmt"
	"runtime/debug"
)

func runVersion(ctx context.Context, env *env, args []string) error {
	fmt.Fprintf(env.stdout, "hmo %s\n", buildVersion())
	return nil
}

// buildVersion is the module version hmo was built from.
func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
