package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const cgroupRoot = "/sys/fs/cgroup"

// cgroupDriver makes one cgroup per session with its limits, on cgroup v1 (one directory per
// controller: memory, cpu, pids) or v2 (one directory in the unified tree).
type cgroupDriver struct {
	v2     bool
	parent string
}

type sessionCgroup struct {
	dirs []string
}

// detectCgroups refuses to run without the controllers it needs: a sandbox without limits would
// let one tenant's command starve the host.
func detectCgroups(parent string) (cgroupDriver, error) {
	if _, err := os.Stat(filepath.Join(cgroupRoot, "memory", "memory.limit_in_bytes")); err == nil {
		for _, controller := range []string{"cpu", "pids"} {
			if _, err := os.Stat(filepath.Join(cgroupRoot, controller)); err != nil {
				return cgroupDriver{}, fmt.Errorf("cgroup v1 controller %q is not mounted under %s", controller, cgroupRoot)
			}
		}
		return cgroupDriver{parent: parent}, nil
	}
	if text, err := os.ReadFile(filepath.Join(cgroupRoot, "cgroup.controllers")); err == nil {
		for _, controller := range []string{"memory", "cpu", "pids"} {
			if !containsWord(string(text), controller) {
				return cgroupDriver{}, fmt.Errorf("cgroup v2 controller %q is not available", controller)
			}
		}
		return cgroupDriver{v2: true, parent: parent}, nil
	}
	return cgroupDriver{}, errors.New("no cgroup v1 memory controller and no cgroup v2 tree under /sys/fs/cgroup: sandboxes cannot be limited")
}

func containsWord(text, word string) bool {
	return slices.Contains(strings.Fields(text), word)
}

// limitFiles says what to write where for one session, relative to each controller's directory.
func (d cgroupDriver) limitFiles(limits sandboxLimits) map[string]map[string]string {
	period := int64(100_000)
	quota := limits.cpuMillis * period / 1000
	if d.v2 {
		return map[string]map[string]string{"": {
			"memory.max":      strconv.FormatInt(limits.memoryBytes, 10),
			"memory.swap.max": "0",
			"cpu.max":         fmt.Sprintf("%d %d", quota, period),
			"pids.max":        strconv.FormatInt(limits.pids, 10),
		}}
	}
	return map[string]map[string]string{
		"memory": {"memory.limit_in_bytes": strconv.FormatInt(limits.memoryBytes, 10)},
		"cpu":    {"cpu.cfs_period_us": strconv.FormatInt(period, 10), "cpu.cfs_quota_us": strconv.FormatInt(quota, 10)},
		"pids":   {"pids.max": strconv.FormatInt(limits.pids, 10)},
	}
}

func (d cgroupDriver) create(id string, limits sandboxLimits) (*sessionCgroup, error) {
	group := &sessionCgroup{}
	for controller, files := range d.limitFiles(limits) {
		parent := filepath.Join(cgroupRoot, controller, d.parent)
		if err := os.MkdirAll(parent, 0o755); err != nil {
			group.remove()
			return nil, err
		}
		if d.v2 {
			// Controllers must be enabled for the parent's children; writing an enabled one again is harmless.
			_ = os.WriteFile(filepath.Join(parent, "cgroup.subtree_control"), []byte("+memory +cpu +pids"), 0o644)
		}
		dir := filepath.Join(parent, id)
		if err := os.Mkdir(dir, 0o755); err != nil {
			group.remove()
			return nil, err
		}
		group.dirs = append(group.dirs, dir)
		for name, value := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(value), 0o644); err != nil {
				if name == "memory.swap.max" && errors.Is(err, os.ErrNotExist) {
					continue // no swap accounting: there is no swap to limit
				}
				group.remove()
				return nil, fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
			}
		}
	}
	return group, nil
}

// limitAll puts the limits on every session together on the parent cgroup.
func (d cgroupDriver) limitAll(limits sandboxLimits) error {
	files := map[string]map[string]string{}
	if d.v2 {
		files[""] = map[string]string{}
		if limits.totalMemoryBytes > 0 {
			files[""]["memory.max"] = strconv.FormatInt(limits.totalMemoryBytes, 10)
		}
		if limits.totalPids > 0 {
			files[""]["pids.max"] = strconv.FormatInt(limits.totalPids, 10)
		}
	} else {
		if limits.totalMemoryBytes > 0 {
			files["memory"] = map[string]string{"memory.limit_in_bytes": strconv.FormatInt(limits.totalMemoryBytes, 10)}
		}
		if limits.totalPids > 0 {
			files["pids"] = map[string]string{"pids.max": strconv.FormatInt(limits.totalPids, 10)}
		}
	}
	for controller, values := range files {
		parent := filepath.Join(cgroupRoot, controller, d.parent)
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return err
		}
		for name, value := range values {
			if err := os.WriteFile(filepath.Join(parent, name), []byte(value), 0o644); err != nil {
				return fmt.Errorf("%s: %w", filepath.Join(parent, name), err)
			}
		}
	}
	return nil
}

// endLeftovers kills every process in a session cgroup under the parent and removes those cgroups:
// what an earlier server left when it died without ending its sessions. Returns how many.
func (d cgroupDriver) endLeftovers() int {
	controllers := []string{""}
	if !d.v2 {
		controllers = []string{"memory", "cpu", "pids"}
	}
	ended := map[string]bool{}
	for _, controller := range controllers {
		parent := filepath.Join(cgroupRoot, controller, d.parent)
		entries, err := os.ReadDir(parent)
		if err != nil {
			continue
		}
		for _, entry := range entries {
			if !entry.IsDir() {
				continue
			}
			dir := filepath.Join(parent, entry.Name())
			if text, err := os.ReadFile(filepath.Join(dir, "cgroup.procs")); err == nil {
				for _, field := range strings.Fields(string(text)) {
					if pid, err := strconv.Atoi(field); err == nil && pid > 1 {
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			}
			(&sessionCgroup{dirs: []string{dir}}).remove()
			ended[entry.Name()] = true
		}
	}
	return len(ended)
}

func (g *sessionCgroup) add(pid int) error {
	for _, dir := range g.dirs {
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// remove deletes the session's cgroups once their processes are gone (the kernel may take a moment
// to let go of a killed namespace's processes).
func (g *sessionCgroup) remove() {
	for _, dir := range g.dirs {
		for attempt := 0; attempt < 50; attempt++ {
			if err := os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}
