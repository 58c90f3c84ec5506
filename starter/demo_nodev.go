//go:build nodev

package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// demoCmd of a starter built with -tags nodev: the demo needs the embedded
// dev stack, which this build leaves out.
func (a *app) demoCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "demo",
		Short: "Not in this build (-tags nodev): run `go run ./starter demo` from a checkout",
		Args:  cobra.ArbitraryArgs,
		RunE: func(*cobra.Command, []string) error {
			return fmt.Errorf("this starter was built without the demo (-tags nodev: no embedded Temporal server, Web UI and Kafka broker, for a smaller binary): run `go run ./starter demo` from a checkout")
		},
	}
}
