// Command stalecheck tells performance engineers which code they are running. It also runs as a Cargo
// external subcommand when installed or linked as cargo-stalecheck (`cargo stalecheck check`).
package main

import (
	"os"

	"github.com/stalecheck/stalecheck/internal/cli"
	"github.com/stalecheck/stalecheck/internal/runner"
)

func main() {
	runner.ExecHelperHook() // `run` starts each timed command through a fresh copy of this executable
	os.Exit(cli.Main(os.Args, cli.Streams{Out: os.Stdout, Err: os.Stderr}))
}
