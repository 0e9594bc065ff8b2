//go:build linux && amd64

package main

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Namespace flags of clone(2): a sandboxed command may start processes and threads, never new
// namespaces (a new user namespace would hand it a full set of capabilities in it).
const namespaceCloneFlags = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
	unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET

// deniedSyscalls answer EPERM in a sandbox: namespaces and mounts, the kernel's riskiest interfaces
// (keyrings, BPF, perf, io_uring, userfaultfd), other processes' memory, modules, time, reboot. Most
// need capabilities the command does not have; the filter is the wall for the ones that do not.
var deniedSyscalls = []uintptr{
	unix.SYS_UNSHARE, unix.SYS_SETNS,
	unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_CHROOT,
	unix.SYS_MOVE_MOUNT, unix.SYS_OPEN_TREE, unix.SYS_FSOPEN, unix.SYS_FSCONFIG, unix.SYS_FSMOUNT,
	unix.SYS_FSPICK, unix.SYS_MOUNT_SETATTR,
	unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
	unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN, unix.SYS_USERFAULTFD,
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
	unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV, unix.SYS_KCMP,
	unix.SYS_OPEN_BY_HANDLE_AT, unix.SYS_NAME_TO_HANDLE_AT, unix.SYS_FANOTIFY_INIT, unix.SYS_SYSLOG,
	unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE,
	unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD, unix.SYS_REBOOT, unix.SYS_SWAPON, unix.SYS_SWAPOFF,
	unix.SYS_ACCT, unix.SYS_QUOTACTL, unix.SYS_LOOKUP_DCOOKIE, unix.SYS_IOPL, unix.SYS_IOPERM,
	unix.SYS_SETTIMEOFDAY, unix.SYS_CLOCK_SETTIME, unix.SYS_CLOCK_ADJTIME, unix.SYS_ADJTIMEX,
	unix.SYS_VHANGUP, unix.SYS_USELIB, unix.SYS_USTAT, unix.SYS_SYSFS, unix.SYS__SYSCTL,
}

func statement(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }

func jump(code uint16, k uint32, jt, jf uint8) unix.SockFilter {
	return unix.SockFilter{Code: code, Jt: jt, Jf: jf, K: k}
}

// sandboxFilter is the seccomp program: x86-64 only (any other ABI, x32 included, is refused),
// the denied calls answer EPERM, clone with a namespace flag EPERM, clone3 ENOSYS (its flags sit
// in memory a filter cannot read; C libraries then fall back to clone), everything else passes.
func sandboxFilter() []unix.SockFilter {
	const (
		load     = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		equal    = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		atLeast  = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		and      = unix.BPF_ALU | unix.BPF_AND | unix.BPF_K
		ret      = unix.BPF_RET | unix.BPF_K
		archAt   = 4  // offsetof(struct seccomp_data, arch)
		nrAt     = 0  // offsetof(struct seccomp_data, nr)
		arg0At   = 16 // offsetof(struct seccomp_data, args[0]), its low 32 bits on little-endian
		x32Flag  = 0x40000000
		allow    = unix.SECCOMP_RET_ALLOW
		eperm    = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		enosys   = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
		killProc = unix.SECCOMP_RET_KILL_PROCESS
	)
	program := []unix.SockFilter{
		statement(load, archAt),
		jump(equal, unix.AUDIT_ARCH_X86_64, 1, 0),
		statement(ret, killProc),
		statement(load, nrAt),
		jump(atLeast, x32Flag, 0, 1),
		statement(ret, eperm),
		// clone: allowed only without namespace flags.
		jump(equal, unix.SYS_CLONE, 0, 5),
		statement(load, arg0At),
		statement(and, namespaceCloneFlags),
		jump(equal, 0, 0, 1),
		statement(ret, allow),
		statement(ret, eperm),
		jump(equal, unix.SYS_CLONE3, 0, 1),
		statement(ret, enosys),
	}
	for _, nr := range deniedSyscalls {
		program = append(program, jump(equal, uint32(nr), 0, 1), statement(ret, eperm))
	}
	return append(program, statement(ret, allow))
}

// installSandboxFilter applies the filter to this thread (the one that execs the command; the
// caller holds it with LockOSThread). no_new_privs must already be set.
func installSandboxFilter() error {
	filter := sandboxFilter()
	program := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	return unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&program)), 0, 0)
}
