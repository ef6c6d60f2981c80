package explain

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/stalecheck/stalecheck/internal/subproc"
)

// MetaPackage is one package as `cargo metadata --format-version 1` reports it: Cargo's own answer to
// where it takes the package from.
type MetaPackage struct {
	Name         string  `json:"name"`
	Version      string  `json:"version"`
	ID           string  `json:"id"`
	Source       *string `json:"source"` // null for a path package
	ManifestPath string  `json:"manifest_path"`
}

// cargoMetadata runs `cargo metadata --format-version 1 --offline` in the workspace (it resolves the
// dependency graph, applying [patch] and source replacement, without building anything).
func cargoMetadata(workspace string, env []string) ([]MetaPackage, error) {
	if workspace == "" {
		return nil, fmt.Errorf("cargo metadata needs a workspace; this build folder was read without one")
	}
	// Offline resolution is quick; a cargo blocked on a lock or a network must not hang explain.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := subproc.Query(exec.CommandContext(ctx, "cargo", "metadata", "--format-version", "1", "--offline"))
	cmd.Dir = workspace
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = time.Second // a child holding the pipe open cannot outlive the deadline
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("cargo metadata did not answer within 2 minutes (is another cargo holding the package cache lock?)")
		}
		return nil, fmt.Errorf("cargo metadata: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	var doc struct {
		Packages []MetaPackage `json:"packages"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return nil, fmt.Errorf("cargo metadata: %w", err)
	}
	return doc.Packages, nil
}

// Where says where a package comes from in cargo metadata's words.
func (m MetaPackage) Where() string {
	if m.Source == nil {
		return "path package, manifest " + m.ManifestPath
	}
	return *m.Source + ", manifest " + m.ManifestPath
}
