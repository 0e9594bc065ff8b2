//go:build !(linux && amd64)

package main

import "errors"

// Only x86-64's system call numbers are in the filter: elsewhere a sandbox without it is refused.
func installSandboxFilter() error {
	return errors.New("the sandbox's seccomp filter is written for linux/amd64 only")
}
