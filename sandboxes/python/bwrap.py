"""The bubblewrap command line that isolates the sandboxed interpreter.

The sandbox sees a read-only ``/usr`` (with the ``/bin``, ``/lib``, ``/lib64``
symlinks of a merged-``/usr`` system), ``/etc/ld.so.cache``, the interpreter binary,
its shared library and its standard library (with ``site-packages`` hidden under an
empty read-only tmpfs), a fresh ``/proc`` for its own pid namespace, a minimal
``/dev``, and one private, size-capped tmpfs at ``/tmp`` that is its home, its
``TMPDIR`` and its working directory. Nothing else of the host exists inside:
no ``/work``, no snapshot, no task files, no ``/root`` beyond the interpreter's own
directories, no host ``/tmp``. All namespaces are new (user, pid, network, ipc,
uts, cgroup, mount): the network is a down-to-loopback stack of its own.

User ids. The kernel never enforces ``RLIMIT_NPROC`` for root (kernel uid 0), and
a user namespace that bubblewrap creates when run as root maps the sandbox's uid to
kernel uid 0. So, as root, we write the namespace's id maps ourselves
(``--userns-block-fd``): ``0 -> 0`` (bubblewrap sets up the mounts, reaching the
interpreter under a ``0700`` ``/root``) and ``65534 -> 65534``; the bootstrap then
drops to 65534 before running any policy code. The process limit is counted per
user namespace, so sandboxes running side by side do not share it. As a non-root
user, bubblewrap maps the sandbox uid 65534 to the caller's own uid
(``--unshare-user --uid``), which is already non-root.
"""

from __future__ import annotations

import functools
import os
import sys
import sysconfig
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath

from stillweb.corpora.errors import UsageError

__all__ = ["SANDBOX_UID", "SANDBOX_HOME", "SANDBOX_PATH", "InterpreterFiles", "interpreter_files", "bwrap_argv", "ID_MAP"]

SANDBOX_UID = 65534
SANDBOX_HOME = "/tmp"
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"
ID_MAP = f"0 0 1\n{SANDBOX_UID} {SANDBOX_UID} 1\n"
SYSTEM_DIRS = ("/usr",)
MERGED_USR_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM_FILES = ("/etc/ld.so.cache",)


@dataclass(frozen=True)
class InterpreterFiles:
    """What of the host's Python installation the sandbox needs, as host paths.

    ``binds`` are mounted read-only at the same path; ``hidden`` (``site-packages``
    inside a bound directory) are covered with an empty read-only tmpfs.
    """

    executable: str
    binds: tuple[str, ...]
    hidden: tuple[str, ...]


@functools.lru_cache(maxsize=1)
def interpreter_files() -> InterpreterFiles:
    """The running interpreter's binary, shared library and standard library."""
    executable = os.path.realpath(sys.executable)
    base_paths = sysconfig.get_paths(vars={"base": sys.base_prefix, "platbase": sys.base_exec_prefix})
    candidates = [executable, base_paths["stdlib"], base_paths["platstdlib"]]
    if sysconfig.get_config_var("Py_ENABLE_SHARED"):
        library = os.path.join(sysconfig.get_config_var("LIBDIR") or "", sysconfig.get_config_var("INSTSONAME") or "")
        candidates.append(os.path.realpath(library))
    binds = _outermost(path for path in candidates if os.path.exists(path) and not _under_system_dirs(path))
    hidden = tuple(
        sorted(
            {
                base_paths[key]
                for key in ("purelib", "platlib")
                if os.path.isdir(base_paths[key]) and any(_is_within(base_paths[key], bind) for bind in binds)
            }
        )
    )
    return InterpreterFiles(executable=executable, binds=binds, hidden=hidden)


def bwrap_argv(
    bwrap: str,
    files: InterpreterFiles,
    tmpfs_bytes: int,
    env: dict[str, str],
    as_root: bool,
    info_fd: int,
    userns_block_fd: int | None,
    seccomp_fd: int | None = None,
) -> list[str]:
    """The ``bwrap`` arguments up to and including ``--`` (the command follows).

    bubblewrap reports the sandbox's pid on ``info_fd``. ``as_root`` selects the
    id-map handshake (``userns_block_fd`` must then be given); otherwise bubblewrap
    maps uid 65534 itself. ``seccomp_fd`` holds a filter for ``--seccomp``.
    """
    argv = [bwrap, "--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"]
    argv += ["--unshare-cgroup-try", "--die-with-parent", "--new-session", "--info-fd", str(info_fd)]
    if as_root:
        if userns_block_fd is None:
            raise UsageError("as_root needs userns_block_fd for the id-map handshake")
        argv += ["--userns-block-fd", str(userns_block_fd)]
    else:
        argv += ["--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID), "--disable-userns"]
    for directory in SYSTEM_DIRS:
        argv += ["--ro-bind", directory, directory]
    for link in MERGED_USR_LINKS:
        if os.path.islink(link):
            argv += ["--symlink", os.readlink(link), link]
        elif os.path.isdir(link):
            argv += ["--ro-bind", link, link]
    for path in SYSTEM_FILES:
        argv += ["--ro-bind-try", path, path]
    for directory in _ancestors(files.binds):
        argv += ["--perms", "0755", "--dir", directory]  # traversable by the unprivileged uid
    for path in files.binds:
        argv += ["--ro-bind", path, path]
    for path in files.hidden:
        argv += ["--tmpfs", path, "--remount-ro", path]
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    argv += ["--proc", "/proc", "--dev", "/dev"]
    argv += ["--size", str(tmpfs_bytes), "--tmpfs", SANDBOX_HOME, "--chdir", SANDBOX_HOME, "--clearenv"]
    for name, value in sorted(env.items()):
        argv += ["--setenv", name, value]
    return argv + ["--"]


def _ancestors(paths: tuple[str, ...]) -> list[str]:
    """The directories above ``paths``, parents first (``/root``, ``/root/.pyenv``, ...)."""
    found = {str(parent) for path in paths for parent in PurePosixPath(path).parents if str(parent) != "/"}
    return sorted(found, key=lambda directory: (directory.count("/"), directory))


def _under_system_dirs(path: str) -> bool:
    return any(_is_within(path, directory) for directory in SYSTEM_DIRS)


def _is_within(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def _outermost(paths: Iterable[str]) -> tuple[str, ...]:
    """``paths`` without duplicates or paths inside another one, sorted."""
    unique = sorted(set(paths))
    return tuple(path for path in unique if not any(other != path and _is_within(path, other) for other in unique))
