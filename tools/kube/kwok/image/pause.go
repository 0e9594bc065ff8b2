package main

import (
	"os"
	"os/signal"
	"syscall"
)

// pauseRun is the pause container's process: it blocks until SIGTERM or SIGINT and exits 0, and
// reaps any child that gets reparented to it when it runs as PID 1 of a shared PID namespace.
func pauseRun() int {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for s := range sigs {
		if s != syscall.SIGCHLD {
			return 0
		}
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
	return 0
}
