"""What the benchmarks' own command-line options share: argparse types that refuse what no benchmark can run,
the --repeats and --merge declarations, and a configuration changed only by the options given. Each benchmark
module declares its options with these in add_arguments(parser) (read by `paraflux bench NAME`)."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path


def whole(minimum: int):
    """An argparse type: a whole number of at least minimum."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"needs a whole number, got '{text[:20]}'") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"needs a whole number of at least {minimum}, got {value}")
        return value
    return parse


def size(text: str) -> float:
    """An argparse type: a finite size of at least 0 (a diameter in wavelengths, a frequency in GHz)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"needs a number, got '{text[:20]}'") from None
    if not 0.0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"needs a finite number of at least 0, got {text[:20]}")
    return value


def listed(values) -> str:
    """Default values as the help shows them: '1 2 4', '1.19 7'."""
    return " ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in values)


def add_repeats(parser: argparse.ArgumentParser, default: int, what: str = "timed repeats per GPU measurement") -> None:
    parser.add_argument("--repeats", type=whole(1), metavar="N", help=f"{what} (default {default})")


def add_merge(parser: argparse.ArgumentParser, what: str) -> None:
    """--merge EARLIER.json: what names the parts of the earlier run that join this run's results."""
    parser.add_argument("--merge", type=Path, metavar="EARLIER.json",
                        help=f"join {what} of this earlier run's results that this run (or the JSON --render "
                             "re-renders) did not measure")


def given(config, **changes):
    """config with the changes whose value was given on the command line (not None, not empty)."""
    return replace(config, **{k: v for k, v in changes.items() if v not in ((), None)})


def tuple_of(values) -> tuple:
    """An nargs="+" option's values as a tuple (empty where the option was not given)."""
    return tuple(values or ())
