package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
)

func newPersonaCmd(env *env) *cobra.Command {
	var sf storeFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "persona [flags]",
		Short: "show the persona profile and drift",
		Example: `  hmo persona
  hmo persona --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runPersona(env, &sf, asJSON) },
	}
	sf.register(cmd.Flags(), withChat)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func runPersona(env *env, sf *storeFlags, asJSON bool) (err error) {
	e, err := sf.openRead(env)
	if err != nil {
		return err
	}
	defer closeStore(e, &err)
	p := e.Persona()
	if p == nil {
		return fmt.Errorf("the store is open in flat mode: no persona")
	}
	prof := p.Profile()
	if asJSON {
		return writeJSON(env, map[string]any{
			"profile": prof, "drift": p.Drift(), "gate_firings": p.Firings(), "updates": p.Updates(),
			"anchor_time": p.AnchorTime(), "history": p.History(),
		})
	}
	if p.Updates() == 0 {
		fmt.Fprintln(env.stdout, "no persona yet: remember something first")
		return nil
	}
	fmt.Fprintf(env.stdout, "drift from anchor: %.4f (gate fired %d times over %d updates)\n", p.Drift(), p.Firings(), p.Updates())
	fmt.Fprintf(env.stdout, "anchor set:        %s\n\n", p.AnchorTime().Format(time.RFC3339))
	fmt.Fprintln(env.stdout, prof.String())
	return nil
}
