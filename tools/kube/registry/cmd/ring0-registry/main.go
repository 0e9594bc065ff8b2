// Command ring0-registry is the local OCI registry of Ring0's real nodes: the upstream
// distribution registry (github.com/distribution/distribution/v3) with only the filesystem
// storage driver and htpasswd auth linked in (no cloud drivers, no proxy, no token auth), so it
// cannot be configured to reach anything but this host's disk. Ring0 starts it bound to 127.0.0.1
// with a generated config: `ring0-registry serve <config.yml>`. Every request needs Ring0's
// credentials (root-only files), so no other process on the host can read or change its images.
//
//	ring0-registry htpasswd   reads "user:password" on stdin, prints "user:<bcrypt hash>"
package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/distribution/distribution/v3/registry"
	_ "github.com/distribution/distribution/v3/registry/auth/htpasswd"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem"
	"golang.org/x/crypto/bcrypt"
)

func main() {
	if len(os.Args) == 2 && os.Args[1] == "htpasswd" {
		line, err := bufio.NewReader(os.Stdin).ReadString('\n')
		user, password, ok := strings.Cut(strings.TrimRight(line, "\r\n"), ":")
		if (err != nil && line == "") || !ok || user == "" || password == "" {
			fmt.Fprintln(os.Stderr, "ring0-registry htpasswd: want \"user:password\" on stdin")
			os.Exit(2)
		}
		hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
		if err != nil {
			fmt.Fprintln(os.Stderr, "ring0-registry htpasswd:", err)
			os.Exit(1)
		}
		fmt.Printf("%s:%s\n", user, hash)
		return
	}
	if err := registry.RootCmd.Execute(); err != nil {
		os.Exit(1)
	}
}
