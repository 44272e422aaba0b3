"""A small seccomp filter for the sandbox (x86-64): no new user namespaces, less kernel surface.

bubblewrap loads it (``--seccomp FD``) just before running the interpreter. It
answers ``EPERM`` to ``unshare``/``clone`` asking for a new user namespace (a
policy has no use for one, and it would hand the code fresh capabilities to probe
the kernel with), ``ENOSYS`` to ``clone3`` (its flags sit in memory a filter cannot
read, so C libraries fall back to ``clone``, which is checked), ``EPERM`` to a few
calls that only widen the kernel's attack surface (``bpf``, ``perf_event_open``,
``userfaultfd``, ``io_uring_*``, the kernel keyring), and ``EPERM`` to every
32-bit or x32 system call. Everything else is allowed: the namespaces, the mounts
and the unprivileged uid are the real walls; this filter only narrows what code
can reach inside them. On other architectures there is no filter
(:func:`seccomp_program` returns None).
"""

from __future__ import annotations

import errno
import platform
import struct

__all__ = ["seccomp_program"]

AUDIT_ARCH_X86_64 = 0xC000003E
X32_SYSCALL_BIT = 0x40000000
CLONE_NEWUSER = 0x10000000
SYS_CLONE, SYS_UNSHARE, SYS_CLONE3 = 56, 272, 435
SYS_DENIED = {
    "add_key": 248,
    "request_key": 249,
    "keyctl": 250,
    "perf_event_open": 298,
    "bpf": 321,
    "userfaultfd": 323,
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
}
OFFSET_NR, OFFSET_ARCH, OFFSET_ARG0 = 0, 4, 16  # struct seccomp_data (arg0's low 32 bits, little-endian)
LD_W_ABS, JEQ_K, JGE_K, JSET_K, RET_K = 0x20, 0x15, 0x35, 0x45, 0x06
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000


def seccomp_program() -> bytes | None:
    """The filter as raw ``struct sock_filter`` entries, or None off x86-64."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return None
    deny, no_clone3, check_flags = "deny", "no_clone3", "check_flags"
    program: list[tuple] = [
        (LD_W_ABS, None, None, OFFSET_ARCH),
        (JEQ_K, None, deny, AUDIT_ARCH_X86_64),
        (LD_W_ABS, None, None, OFFSET_NR),
        (JGE_K, deny, None, X32_SYSCALL_BIT),
        (JEQ_K, no_clone3, None, SYS_CLONE3),
        (JEQ_K, check_flags, None, SYS_CLONE),
        (JEQ_K, check_flags, None, SYS_UNSHARE),
        *((JEQ_K, deny, None, number) for _, number in sorted(SYS_DENIED.items(), key=lambda item: item[1])),
        (RET_K, None, None, RET_ALLOW),
        check_flags,
        (LD_W_ABS, None, None, OFFSET_ARG0),
        (JSET_K, deny, None, CLONE_NEWUSER),
        (RET_K, None, None, RET_ALLOW),
        deny,
        (RET_K, None, None, RET_ERRNO | errno.EPERM),
        no_clone3,
        (RET_K, None, None, RET_ERRNO | errno.ENOSYS),
    ]
    return _assemble(program)


def _assemble(program: list) -> bytes:
    """Resolve label names (strings in the list) to relative jumps and pack the instructions."""
    labels: dict[str, int] = {}
    instructions: list[tuple] = []
    for item in program:
        if isinstance(item, str):
            labels[item] = len(instructions)
        else:
            instructions.append(item)
    packed = bytearray()
    for index, (code, jump_true, jump_false, k) in enumerate(instructions):
        offsets = [0 if label is None else labels[label] - index - 1 for label in (jump_true, jump_false)]
        packed += struct.pack("<HBBI", code, offsets[0], offsets[1], k)
    return bytes(packed)
