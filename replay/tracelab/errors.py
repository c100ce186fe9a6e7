"""Exit statuses and the one error line of every tracelab command.

Every command ends in one of these statuses, and a failure prints one line,
`tracelab: error: <what>: <reason>`, on stderr — never a traceback unless
`tracelab --debug` (or TRACELAB_DEBUG=1) asks for one:

  0  success
  1  the command ran and reports a negative result (e.g. a fidelity marginal
     failed, a check did not hold)
  2  usage: bad arguments, options, element specs or configuration files
  3  input data: a trace, profile, model or log that cannot be read or is
     invalid
  4  output: a result that cannot be written (permission, full disk, ...)
  5  internal: a bug in tracelab (please report it with the --debug output)
  130, 143  interrupted by SIGINT (Ctrl-C) or SIGTERM; what the command was
     writing is removed and the previous outputs stay (tracelab_models.outputs)

The Rust analyzer (`tracelab profile`) uses the same statuses.
"""

from __future__ import annotations

import argparse
import difflib
import errno
import os
import re
import sys
import traceback
from pathlib import Path

OK, NEGATIVE, USAGE, INPUT, OUTPUT, INTERNAL = 0, 1, 2, 3, 4, 5

# Error classes of the parts, by name (the front door imports none of the
# parts' modules): what kind of failure each one reports.
_BY_CLASS = {
    "ConfigError": USAGE,
    "SpecError": USAGE,
    "PlanError": USAGE,
    "PredictorMissing": USAGE,
    "ProfileError": INPUT,
    "SynthError": INPUT,
    "ReportError": INPUT,
    "PredictorError": INPUT,
    "JSONDecodeError": INPUT,
    "ValidationError": INPUT,
    "ArrowInvalid": INPUT,
    "OutputError": OUTPUT,
    "ConservationError": INTERNAL,
}
# OSErrors that say an input is missing or unreadable rather than an output
# unwritable: a path that does not exist is usually one given to read.
_INPUT_ERRNOS = {errno.ENOENT, errno.EISDIR, errno.ENOTDIR}
_OUTPUT_OPTIONS = {"-o", "--output", "--out-pcap", "--truth"}


class CommandError(Exception):
    """A failure a command reports with its exit status (what and why)."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Python runs next, as Ctrl-C raises KeyboardInterrupt:
    both unwind the command so that what it was writing is removed."""


def raise_terminated(signum, frame) -> None:
    raise Terminated()


def debug_requested() -> bool:
    return os.environ.get("TRACELAB_DEBUG", "") not in ("", "0")


def did_you_mean(word: str, candidates) -> str:
    """`; did you mean `x`?` for the candidate closest to a mistyped `word`
    (difflib's ratio at least 0.6), or nothing."""
    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return f"; did you mean `{close[0]}`?" if close else ""


# The spec grammar's errors name the unknown word and the known ones:
# "unknown element 'efdd' in 'efdd(capacity=300)' (known: fifo, efd, ...)",
# likewise for sources and parameters (click-elements/core/spec.hh, the engine).
_UNKNOWN_WORD = re.compile(r"unknown (?:element|source|parameter) '([^']*)'.*\(known: ([^)]*)\)")


def _with_hint(line: str) -> str:
    m = _UNKNOWN_WORD.search(line)
    return line + did_you_mean(m.group(1), m.group(2).split(", ")) if m else line


def _options(parser: argparse.ArgumentParser) -> list[str]:
    """The option strings of a parser and of its subcommands' parsers."""
    out = []
    for action in parser._actions:
        out += action.option_strings
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                out += _options(sub)
    return out


def _usage_hint(parser: argparse.ArgumentParser, message: str) -> str:
    if message.startswith("unrecognized arguments: "):
        for token in message.removeprefix("unrecognized arguments: ").split():
            if token.startswith("-") and (hint := did_you_mean(token.split("=")[0], _options(parser))):
                return hint
    if m := re.match(r"argument \S+: invalid choice: '([^']*)' \(choose from (.*)\)$", message):
        return did_you_mean(m.group(1), [c.strip(" '") for c in m.group(2).split(",")])
    return ""


def suggest_in_usage_errors() -> None:
    """Makes every argparse parser of this process end a usage error for a
    mistyped option or choice with `did you mean` (the subcommands build their
    own parsers; this reaches all of them from the front door in one place)."""
    error = argparse.ArgumentParser.error
    if getattr(error, "suggests", False):
        return

    def error_with_hint(self, message):
        error(self, message + _usage_hint(self, message))

    error_with_hint.suggests = True
    argparse.ArgumentParser.error = error_with_hint


def fail(status: int, error: BaseException | str) -> int:
    """Prints the one error line of a failure a command handled itself (and
    its traceback with --debug); returns the exit status to end with."""
    if debug_requested() and isinstance(error, BaseException):
        traceback.print_exception(error)
    print(f"tracelab: error: {_with_hint(_one_line(str(error)))}", file=sys.stderr)
    return status


def output_paths(argv: list[str]) -> list[Path]:
    """The paths a command line names as outputs (-o/--output/--out-pcap)."""
    out = []
    for i, arg in enumerate(argv):
        name, eq, value = arg.partition("=")
        if name in _OUTPUT_OPTIONS:
            if eq:
                out.append(Path(value))
            elif i + 1 < len(argv):
                out.append(Path(argv[i + 1]))
    return out


def _is_under(path: str, roots: list[Path]) -> bool:
    p = Path(os.path.abspath(path))
    return any(p == (r := Path(os.path.abspath(root))) or r in p.parents for root in roots)


def classify(exc: BaseException, outputs: list[Path] = ()) -> tuple[int, str]:
    """The exit status and the one-line message for an exception that ended a
    command whose output paths are `outputs`."""
    if isinstance(exc, CommandError):
        return exc.status, str(exc)
    if isinstance(exc, OSError):
        where = f" ({exc.filename})" if exc.filename else ""
        reason = exc.strerror or str(exc)
        if exc.filename and _is_under(str(exc.filename), list(outputs)):
            return OUTPUT, f"cannot write output: {reason}{where}"
        status = INPUT if exc.errno in _INPUT_ERRNOS else OUTPUT
        return status, f"{reason}{where}"
    for cls in type(exc).__mro__:
        if cls.__name__ in _BY_CLASS:
            return _BY_CLASS[cls.__name__], _with_hint(_one_line(str(exc)))
    detail = _one_line(str(exc))
    return INTERNAL, f"internal error: {type(exc).__name__}{': ' + detail if detail else ''} " + (
        "(run `tracelab --debug ...` for the traceback and report it)"
    )


def _one_line(text: str) -> str:
    return " ".join(part.strip() for part in text.strip().splitlines() if part.strip())
