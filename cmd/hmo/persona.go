package main

import (
	"context"
	"fmt"
	"time"
)

func runPersona(ctx context.Context, env *env, args []string) (err error) {
	fs := newFlags(env, "persona", "")
	var sf storeFlags
	sf.register(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	e, err := sf.open(env)
	if err != nil {
		return err
	}
	defer closeStore(e, &err)
	p := e.Persona()
	if p == nil {
		return fmt.Errorf("the store is open in flat mode: no persona")
	}
	prof := p.Profile()
	if *asJSON {
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
