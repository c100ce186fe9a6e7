"""Atomic, checked outputs for every tracelab command that writes results.

A command writes into a temporary sibling of its output — `.STEM.partial-PID.SUFFIX`,
a file or a directory — and renames it into place only once everything in it
is written, so a reader sees the previous output or the new one, never a mix
or a half-written file. On a failure or a signal that reaches Python (Ctrl-C,
SIGTERM: the front door turns both into exceptions) the sibling is removed and
the previous output is left untouched. After a kill -9 the sibling stays; the
next command writing the same output removes it (`clean_stale`), since the
PID in its name is no longer running.

Several outputs of one command are committed together (`together`): signals
are held between their renames. A directory is replaced in two renames (the old one aside, the new one in):
a kill -9 between them leaves the old one as `.STEM.old-PID.SUFFIX`, which
`clean_stale` moves back. Every OSError while writing or renaming becomes an
OutputError: the front door prints it as one line and exits 4.

This module lives in tracelab_models because both packages write outputs and
tracelab_models may not import tracelab (.importlinter).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

OUTPUT_STATUS = 4  # tracelab.errors.OUTPUT, the status the front door gives OutputError


class OutputError(Exception):
    """An output that could not be written: `cannot write <what> (<path>): <reason>`."""

    status = OUTPUT_STATUS

    def __init__(self, what: str, path: Path | str, reason: str):
        super().__init__(f"cannot write {what} ({path}): {reason}")
        self.path = Path(path)


def _reason(e: OSError) -> str:
    return e.strerror or str(e)


def _about_output(e: OSError, path: Path) -> bool:
    """Whether an OSError raised while an output was written is about that
    output (or says nothing about its file, as pyarrow's writers do), rather
    than about an input read in the same block."""
    if not e.filename:
        return True
    named = Path(os.path.abspath(e.filename))
    out = Path(os.path.abspath(path))
    siblings = named.parent == out.parent and named.name.startswith(f".{out.stem}.")
    return named == out or out in named.parents or named in out.parents or siblings


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


def _sibling(path: Path, kind: str, pid: int) -> Path:
    # The suffix stays last: writers such as matplotlib pick the format by it.
    return path.with_name(f".{path.stem}.{kind}-{pid}{path.suffix}")


def _sibling_pid(path: Path, kind: str, entry: Path) -> int | None:
    """The PID in `entry`'s name if it is a `kind` sibling of `path`."""
    m = re.fullmatch(rf"\.{re.escape(path.stem)}\.{kind}-(\d+){re.escape(path.suffix)}", entry.name)
    return int(m.group(1)) if m else None


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def clean_stale(path: Path) -> None:
    """Removes the partial siblings of `path` left by a process that no longer
    runs, and puts back a previous directory left aside between two renames."""
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        return
    for kind in ("partial", "old"):
        for entry in parent.iterdir():
            pid = _sibling_pid(path, kind, entry)
            if pid is None or _pid_alive(pid):
                continue
            if kind == "old" and not path.exists():
                entry.rename(path)
            else:
                _remove(entry)


@contextlib.contextmanager
def _staging(what: str, path: Path, staged: Path) -> Iterator[None]:
    """The frame of an atomic output: the parent made and stale partials of
    `path` cleaned first; an OSError about the output turned into one
    OutputError; `staged` removed whatever happens (after a successful
    rename it no longer exists)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        clean_stale(path)
        yield
    except OSError as e:
        if not _about_output(e, path):
            raise
        raise OutputError(what, path, _reason(e)) from e
    finally:
        with contextlib.suppress(OSError):
            _remove(staged)


@contextlib.contextmanager
def atomic_file(path: Path | str, what: str = "output") -> Iterator[Path]:
    """Yields a temporary sibling to write `path` into; renamed to `path` when
    the block ends without an exception, removed otherwise."""
    path = Path(path)
    tmp = _sibling(path, "partial", os.getpid())
    with _staging(what, path, tmp):
        yield tmp
        if not tmp.exists():
            raise OutputError(what, path, "nothing was written")
        _fsync(tmp)
        os.replace(tmp, path)


@contextlib.contextmanager
def atomic_dir(path: Path | str, what: str = "output", owns: Callable[[Path], bool] | None = None) -> Iterator[Path]:
    """Yields an empty temporary sibling directory to write `path` into; it
    replaces `path` when the block ends without an exception and is removed
    otherwise. `owns(path)` says whether an existing non-empty `path` is a
    previous output of the same command: another directory is never replaced."""
    path = Path(path)
    staged = _sibling(path, "partial", os.getpid())
    with _staging(what, path, staged):
        if path.exists() and not path.is_dir():
            raise OutputError(what, path, "exists and is not a directory")
        if path.is_dir() and owns is not None and any(path.iterdir()) and not owns(path):
            raise OutputError(what, path, "exists and does not hold a previous output of this command; not replaced")
        _remove(staged)
        staged.mkdir()
        yield staged
        _replace_dir(staged, path)


def _replace_dir(staged: Path, final: Path) -> None:
    old = None
    if final.exists():
        old = _sibling(final, "old", os.getpid())
        final.rename(old)
    try:
        staged.rename(final)
    except OSError:
        if old is not None:
            old.rename(final)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


@contextlib.contextmanager
def together() -> Iterator[contextlib.ExitStack]:
    """An ExitStack for several atomic outputs of one command, committed
    together: a SIGINT or SIGTERM arriving from the first rename to the last is
    held and acted on once all are in place, so a signal cannot leave some of
    them new and the others old. (A kill -9 in that window still can: no
    rename spans two paths.) Python handlers, not a signal mask, hold them: a
    mask is per thread, and another thread would take the signal."""
    held: list[int] = []
    previous: dict[int, object] = {}

    def hold(signum, frame) -> None:
        held.append(signum)

    def release() -> None:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if held:
            signal.raise_signal(held[0])

    with contextlib.ExitStack() as stack:
        stack.callback(release)
        yield stack
        for signum in (signal.SIGINT, signal.SIGTERM):
            previous[signum] = signal.signal(signum, hold)


def _fsync(path: Path) -> None:
    """Flushes a written file to the disk, so a full or failing disk reports
    here, before the rename, rather than never."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_text(path: Path | str, text: str, what: str = "output") -> None:
    """Writes `text` to `path` atomically."""
    with atomic_file(path, what) as tmp:
        tmp.write_text(text)
