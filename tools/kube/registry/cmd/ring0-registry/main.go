// Command ring0-registry is the local OCI registry of Ring0's real nodes: the upstream
// distribution registry (github.com/distribution/distribution/v3) with only the filesystem
// storage driver linked in (no cloud drivers, no proxy, no token auth), so it cannot be
// configured to reach anything but this host's disk. Ring0 starts it bound to 127.0.0.1 with a
// generated config: `ring0-registry serve <config.yml>`.
package main

import (
	"os"

	"github.com/distribution/distribution/v3/registry"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem"
)

func main() {
	if err := registry.RootCmd.Execute(); err != nil {
		os.Exit(1)
	}
}
