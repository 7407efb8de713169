"""What every benchmark report shares, so that a report module holds only its own tables and the reasons behind
its verdicts: the header (device, date, command, code, versions, a run cut short, option names renamed since),
the earlier runs joined in, Markdown tables and sections, and targets stated as met, MISSED or NOT MEASURED.

A new report reads, e.g.:
    page([*header(title, f"- Device: {data['gpu']['device']}", data), *merged_runs(data),
          *section("Times", table(["case", "s"], "lr", [(c["name"], f"{c['seconds']:.3g}") for c in data["cases"]])),
          *section("Targets", [target(f"under 1 s: {t:.2f} s", t < 1.0), reason("...")])])"""

from __future__ import annotations

from typing import Iterable


def header(title: str, device: str, data: dict) -> list[str]:
    """The title and the bullets every report opens with: device (the report's own words, a bullet), date,
    command and code, versions, whether the run was cut short, and the options its recorded commands name
    that were renamed since."""
    return [f"# {title}", "", device,
            f"- Date: {data['date']}; command: `{data['command']}`; code: "
            f"{'commit ' + data['commit'] if data.get('commit') else 'commit not recorded in this run'}",
            "- Versions: " + ", ".join(f"{k} {v}" for k, v in data["versions"].items()),
            *([f"- Cut short: {CUT_SHORT}"] if data.get("cut_short") else []), *renamed_options(data)]


def on_host(data: dict, per_row: bool = True) -> str:
    """The device bullet of a benchmark run on a shared host alone: its threads and load when it started (per_row:
    each row of the report gives its own)."""
    rows = " (other work shares this host: each row gives the load when it started)" if per_row else ""
    return (f"- Host: {data['host_threads']} threads ({data['host_cpu']}), one-minute load {data['load_before']:.1f} "
            f"when it started{rows}; no GPU used")


CUT_SHORT = ("this run stopped before its end (its partial results, saved after each finished case, e.g. when a "
             "device call's time limit ended it): it holds only the cases it finished; the rest of its command's "
             "cases are not from it.")


def run_named(run: dict) -> str:
    """An earlier run as the reports cite it: date, command, commit."""
    return f"{run['date']}, `{run['command']}`, commit {run['commit']}"


def merged_runs(data: dict) -> list[str]:
    """A bullet per earlier run joined in by --merge (environment.merge_cases' merged_runs), saying what of it
    is still in the record."""
    return [f"- Merged in, an earlier run on the same device ({_merged_what(r)}): {run_named(r)}"
            for r in data.get("merged_runs", [])]


def _merged_what(run: dict) -> str:
    if run.get("known"):
        return "its cases that no later run re-measured"
    return "joined before each case recorded its run: later runs may have re-measured all it measured"


def renamed_options(data: dict) -> list[str]:
    """A bullet where the commands recorded in data name options of its benchmark that were renamed since
    (the registry's renamed): the pages keep the commands as they were typed."""
    from .registry import BENCHMARKS  # noqa: PLC0415

    bench = BENCHMARKS.get(data.get("benchmark"))
    words = {w for command in _commands(data) for w in command.split()}
    used = [(old, new) for old, new in (bench.renamed if bench else ()) if old in words]
    if not used:
        return []
    pairs = [f"`{old}` is `{new}`" for old, new in used]
    listed = ", ".join(pairs[:-1]) + " and " + pairs[-1] if len(pairs) > 1 else pairs[0]
    return [f"- Option names: the commands recorded here predate `paraflux bench {bench.name}`'s own options; in "
            f"them {listed} now."]


def _commands(record) -> Iterable[str]:
    """Every command recorded anywhere in a results record (its own, its merged and earlier runs')."""
    if isinstance(record, dict):
        for key, value in record.items():
            if key == "command" and isinstance(value, str):
                yield value
            else:
                yield from _commands(value)
    elif isinstance(record, list):
        for value in record:
            yield from _commands(value)


def verdict(ok: bool | None) -> str:
    """A target's verdict: met, MISSED, or NOT MEASURED where the record has nothing to judge (None)."""
    return "NOT MEASURED" if ok is None else "met" if ok else "MISSED"


def target(text: str, ok: bool | None) -> str:
    """A target's bullet: '- text: met.' (MISSED, NOT MEASURED)."""
    return f"- {text}: {verdict(ok)}."


def reason(text: str) -> str:
    """The bullet under a target that says why it came out as it did."""
    return f"  - Reason: {text}"


def remedy(text: str) -> str:
    """The bullet under a missed target that says what would reach it."""
    return f"  - What would reach it: {text}"


def row(cells: Iterable) -> str:
    """A Markdown table row."""
    return "| " + " | ".join(str(c) for c in cells) + " |"


def table(columns: Iterable[str], align: str, rows: Iterable[Iterable] = ()) -> list[str]:
    """A Markdown table: its header, the alignment of each column ('l' left, 'r' right) and its rows."""
    return [row(columns), "|" + "".join("---|" if a == "l" else "---:|" for a in align), *map(row, rows)]


def section(title: str, lines: list[str]) -> list[str]:
    """A '## title' section of lines, set off by blank lines."""
    return ["", f"## {title}", "", *lines]


def page(lines: list[str]) -> str:
    """The report's Markdown: its lines, ending in a newline."""
    return "\n".join(lines) + "\n"
