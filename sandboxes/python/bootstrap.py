"""The program the sandboxed interpreter runs before the policy's code.

It is not imported by the host: :mod:`stillweb.sandboxes.python.sandbox` reads this
file's text and passes it to ``python -S -s -P -B -c``, with the limits as
arguments and the policy's code on stdin. It then, in order:

1. reads the code (UTF-8 bytes) from stdin and points stdin at ``/dev/null``;
2. applies the resource limits (CPU seconds, address space, processes, file size,
   no core files);
3. if asked (bubblewrap as root), hands the private home to the unprivileged uid and
   drops to it: the kernel enforces ``RLIMIT_NPROC`` only for non-root users;
4. makes the run deterministic: freezes the wall clock at :data:`FROZEN_EPOCH_S`
   (``time.time``/``time_ns``/``localtime``/``gmtime``/``ctime``/``asctime``/
   ``strftime``, ``datetime.datetime.now/utcnow/today``, ``datetime.date.today``),
   seeds :mod:`random` with 0, and replaces ``os.urandom`` (hence ``uuid4``,
   ``secrets``, ``random.SystemRandom``) and unseeded ``random.Random()`` with a
   seeded stream (``datetime`` and ``random`` are patched when first imported, by
   :class:`FixupOnImport`, so code that never imports them does not pay for it);
5. writes ``started`` on the status fd, so the host can tell a sandbox that never
   started from a program that failed, and closes every inherited descriptor but
   stdin, stdout and stderr;
6. runs the code as ``__main__`` in a fresh module, compiled with the file name
   ``<code>``: tracebacks show the policy's own line numbers and lines, never these.

Monotonic clocks, CPU clocks, object addresses and C-level entropy (``ssl``,
``hashlib`` salts) are not frozen.
"""

import os
import sys

FROZEN_EPOCH_S = 1704067200  # 2024-01-01T00:00:00Z
RANDOM_SEED = 0
URANDOM_SEED = 0x5EED
CODE_FILENAME = "<code>"
_urandom_stream = None  # the C Random behind deterministic_urandom, made on first use


def main() -> None:
    """Apply the limits, drop privileges, freeze time and run the code from stdin."""
    cpu_s, memory_bytes, max_processes, max_file_bytes, drop_to_uid, status_fd = (int(a) for a in sys.argv[1:7])
    source = sys.stdin.buffer.read()
    null_fd = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null_fd, 0)
    os.close(null_fd)
    apply_limits(cpu_s, memory_bytes, max_processes, max_file_bytes)
    if drop_to_uid >= 0:
        drop_privileges(drop_to_uid, os.environ["HOME"])
    freeze_time_module()
    os.urandom = deterministic_urandom
    text = source.decode("utf-8", "surrogatepass")
    fixups = {"datetime": freeze_datetime, "random": seed_random, "linecache": lambda module: register_lines(module, text)}
    sys.meta_path.insert(0, FixupOnImport(fixups))
    sys.stdout.reconfigure(line_buffering=True)
    os.write(status_fd, b"started")
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))  # the status fd and any of bubblewrap's side channels
    run_code(text)


class FixupOnImport:
    """A meta-path finder that patches a module right after it is first imported.

    Importing :mod:`datetime`, :mod:`random` and :mod:`linecache` costs ~9 ms; code
    that never imports them should not pay for freezing or seeding them.
    """

    def __init__(self, fixups: dict) -> None:
        self.fixups = fixups

    def find_spec(self, name, path=None, target=None):
        fixup = self.fixups.pop(name, None)
        if fixup is None:
            return None
        if not self.fixups:
            sys.meta_path.remove(self)
        for finder in sys.meta_path:
            if finder is not self and hasattr(finder, "find_spec"):
                spec = finder.find_spec(name, path, target)
                if spec is not None and spec.loader is not None:
                    spec.loader = FixingLoader(spec.loader, fixup)
                    return spec
        return None


class FixingLoader:
    """Runs a loader, then the fixup on the fresh module; otherwise behaves as the loader."""

    def __init__(self, loader, fixup) -> None:
        self.loader = loader
        self.fixup = fixup

    def __getattr__(self, name):
        return getattr(self.loader, name)

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module) -> None:
        self.loader.exec_module(module)
        self.fixup(module)


def apply_limits(cpu_s: int, memory_bytes: int, max_processes: int, max_file_bytes: int) -> None:
    """Set soft and hard limits: the code cannot raise them again."""
    import resource

    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_NPROC, (max_processes, max_processes))
    resource.setrlimit(resource.RLIMIT_FSIZE, (max_file_bytes, max_file_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def drop_privileges(uid: int, home: str) -> None:
    """Give ``home`` to ``uid`` and become ``uid`` for good (all capabilities are lost)."""
    os.chown(home, uid, uid)
    os.chmod(home, 0o700)
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


def freeze_time_module() -> None:
    """Make :mod:`time`'s wall-clock readings return :data:`FROZEN_EPOCH_S` (UTC)."""
    import time

    real_gmtime, real_localtime = time.gmtime, time.localtime
    real_ctime, real_asctime, real_strftime = time.ctime, time.asctime, time.strftime

    def frozen_time() -> float:
        return float(FROZEN_EPOCH_S)

    def frozen_time_ns() -> int:
        return FROZEN_EPOCH_S * 1_000_000_000

    def gmtime(seconds=None):
        return real_gmtime(FROZEN_EPOCH_S if seconds is None else seconds)

    def localtime(seconds=None):
        return real_localtime(FROZEN_EPOCH_S if seconds is None else seconds)

    def ctime(seconds=None):
        return real_ctime(FROZEN_EPOCH_S if seconds is None else seconds)

    def asctime(moment=None):
        return real_asctime(real_localtime(FROZEN_EPOCH_S) if moment is None else moment)

    def strftime(pattern, moment=None):
        return real_strftime(pattern, real_localtime(FROZEN_EPOCH_S) if moment is None else moment)

    time.time, time.time_ns = frozen_time, frozen_time_ns
    time.gmtime, time.localtime, time.ctime, time.asctime, time.strftime = gmtime, localtime, ctime, asctime, strftime


def freeze_datetime(datetime) -> None:
    """Make ``datetime.now/utcnow/today`` and ``date.today`` return the frozen instant."""
    real_date, real_datetime = datetime.date, datetime.datetime

    class date(real_date, metaclass=StandIn):  # noqa: N801 - stands in for datetime.date
        real = real_date

        @classmethod
        def today(cls):
            return real_date.fromtimestamp(FROZEN_EPOCH_S)

    class datetime_(real_datetime, metaclass=StandIn):
        real = real_datetime

        @classmethod
        def now(cls, tz=None):
            return real_datetime.fromtimestamp(FROZEN_EPOCH_S, tz)

        @classmethod
        def utcnow(cls):
            return real_datetime.fromtimestamp(FROZEN_EPOCH_S, datetime.timezone.utc).replace(tzinfo=None)

        @classmethod
        def today(cls):
            return real_datetime.fromtimestamp(FROZEN_EPOCH_S)

    for frozen, name in ((date, "date"), (datetime_, "datetime")):
        frozen.__name__ = f"datetime.{name}"  # the C repr prints the type name: keep it as usual
        frozen.__qualname__ = name
        frozen.__module__ = "datetime"
        setattr(datetime, name, frozen)


class StandIn(type):
    """Metaclass of a patched subclass that ``isinstance``/``issubclass`` treat as its base ``real``."""

    def __instancecheck__(cls, instance) -> bool:
        return isinstance(instance, cls.real)

    def __subclasscheck__(cls, subclass) -> bool:
        return issubclass(subclass, cls.real)


def deterministic_urandom(size: int) -> bytes:
    """``os.urandom`` replaced by a seeded stream (so ``uuid4``, ``secrets``... repeat)."""
    global _urandom_stream
    if size < 0:
        raise ValueError("negative argument not allowed")
    if _urandom_stream is None:
        import _random

        _urandom_stream = _random.Random(URANDOM_SEED)
    return _urandom_stream.getrandbits(8 * size).to_bytes(size, "little") if size else b""


def seed_random(random) -> None:
    """Seed :mod:`random` with 0; unseeded ``Random()`` and ``SystemRandom`` draw from the seeded stream."""
    real_seed = random.Random.seed

    def seed(self, a=None, version=2):
        real_seed(self, int.from_bytes(deterministic_urandom(32), "big") if a is None else a, version)

    random._urandom = deterministic_urandom
    random.Random.seed = seed
    random.seed(RANDOM_SEED)


def register_lines(linecache, text: str) -> None:
    """Let tracebacks show the lines of ``<code>``."""
    linecache.cache[CODE_FILENAME] = (len(text), None, text.splitlines(True), CODE_FILENAME)


def run_code(text: str) -> None:
    """Compile and run ``text`` as ``__main__``; print an uncaught exception like Python does."""
    import types

    try:
        code = compile(text, CODE_FILENAME, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as error:
        report_exception(error, skip_frames=True)
        sys.exit(1)
    module = types.ModuleType("__main__")
    module.__builtins__ = __builtins__
    sys.modules["__main__"] = module
    sys.argv = [CODE_FILENAME]
    try:
        exec(code, module.__dict__)
    except SystemExit:
        raise
    except BaseException as error:  # noqa: BLE001 - report it, as the interpreter would
        report_exception(error, skip_frames=False)
        sys.exit(1)


def report_exception(error: BaseException, skip_frames: bool) -> None:
    """Print ``error``'s traceback without this bootstrap's own frames."""
    import traceback

    tb = error.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != CODE_FILENAME:
        tb = tb.tb_next
    if skip_frames:
        tb = None
    sys.stdout.flush()
    traceback.print_exception(type(error), error, tb)
    sys.stderr.flush()


if __name__ == "__main__":
    main()
