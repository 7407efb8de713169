"""The generated parts of the docs: the problem-file reference and the variant and case lists of docs/studies and
each benchmark's options in docs/benchmarks.md, rendered from the declarations the parsers, the study registry
and `paraflux bench` read (schema.Schema, variants.VariantAxis, bench.registry), between markers in the pages:

    <!-- BEGIN reference KIND [SECTION.KEY ...] -->  ...  <!-- END reference -->
    <!-- BEGIN variants STUDY [AXIS ...] -->  ...  <!-- END variants -->
    <!-- BEGIN cases STUDY -->  ...  <!-- END cases -->
    <!-- BEGIN bench all -->  ...  <!-- END bench -->

`python -m paraflux.engine.problems.reference --write` rewrites them; `--check` exits 1 where one is stale."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from .schema import REQUIRED, Key, Schema, Section

BLOCK = re.compile(r"(<!-- BEGIN (reference|variants|cases|bench) ([^>]*?) -->\n)(.*?)(<!-- END \2 -->)", re.S)
PAGES = ("docs/studies/*.md", "docs/benchmarks.md")  # where --write and --check look by default
TYPE_NAMES = {str: "string", int: "integer", float: "number", bool: "boolean", list: "array", dict: "table"}


def schemas() -> dict[str, Schema]:
    """Every study's problem-file declaration by problem kind."""
    from . import bem, elasticity, magnetostatic, scattering, truncation  # noqa: PLC0415

    return {s.kind: s for s in (m.schema() for m in (magnetostatic, elasticity, bem, truncation, scattering))}


def toml_value(value: Any) -> str:
    """A default as it is written in a problem file."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"
    return str(value)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def key_row(key: Key) -> str:
    """One key as a Markdown table row: key, type, default, unit, allowed, meaning."""
    types = key.type if isinstance(key.type, tuple) else (key.type,)
    shown_type = " or ".join(TYPE_NAMES[t] for t in types) + (f" `{key.form}`" if key.form else "")
    default = "required" if key.default is REQUIRED else "none" if key.default is None else \
        f"`{toml_value(key.default)}`"
    allowed = ", ".join(f"`{c}`" for c in key.allowed) if isinstance(key.allowed, tuple) else key.allowed
    cells = (f"`{key.name}`", shown_type, default, key.unit, allowed, key.doc)
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def render_section(section: Section, names: tuple[str, ...] | None = None) -> str:
    """A section's heading, what it is and its keys (all, or those named)."""
    keys = [k for k in section.keys if names is None or k.name in names]
    lines = [f"### `{section.header}`", ""]
    if section.doc:
        lines += [section.doc[0].upper() + section.doc[1:] + ".", ""]
    lines += ["| key | type | default | unit | allowed | meaning |", "|---|---|---|---|---|---|"]
    return "\n".join(lines + [key_row(k) for k in keys])


def render_reference(kind: str, only: tuple[str, ...] = ()) -> str:
    """The problem-file reference of a kind: every section, or the SECTION.KEY entries of `only`."""
    schema = schemas()[kind]
    if not only:
        return "\n\n".join(render_section(s) for s in schema.sections)
    wanted: dict[str, list[str]] = {}
    for entry in only:
        section, _, key = entry.rpartition(".")
        schema[section][key]  # a page naming an undeclared key fails here
        wanted.setdefault(section, []).append(key)
    return "\n\n".join(render_section(schema[s], tuple(keys)) for s, keys in wanted.items())


def render_variants(study_name: str, only: tuple[str, ...] = ()) -> str:
    """A study's variant axes and numeric parameters from the registry: the option, the problem-file key,
    each choice with what it needs, the default (all axes and parameters, or those named in `only`)."""
    from ..studies import STUDIES  # noqa: PLC0415

    study = STUDIES[study_name]
    schema = schemas()[study.problem_kind]
    lines = []
    for axis in study.axes:
        if only and axis.name not in only:
            continue
        when = f", only with `{axis.applies_when[0]} = \"{axis.applies_when[1]}\"`" if axis.applies_when else ""
        lines.append(f"- **{axis.label}**: `{axis.option}`{_file_key(schema, axis.name)}; default "
                     f"`{axis.default}`{when}")
        for choice in axis.choices:
            needs = ["GPU"] * choice.needs_gpu + [f"needs `{choice.distribution or choice.package}`"] * bool(
                choice.package)
            label = f" ({', '.join(needs)})" if needs else ""
            lines.append(f"  - `{choice.name}`{label}: {choice.description}")
    for parameter in study.parameters:
        if only and parameter.name not in only:
            continue
        lines.append(f"- **{parameter.label}**: `{parameter.option}`{_file_key(schema, parameter.name)}, "
                     f"{parameter.minimum:g} to "
                     f"{parameter.maximum:g}, default {parameter.default:g}: {parameter.description}")
    return "\n".join(lines)


def render_cases(study_name: str) -> str:
    """A study's built-in cases from the registry: name, title and description."""
    from ..studies import STUDIES  # noqa: PLC0415

    rows = [f"| `{c.name}` | {_cell(c.title)} | {_cell(c.description)} |" for c in STUDIES[study_name].cases]
    return "\n".join(["| case | title | what it is |", "|---|---|---|", *rows])


def render_bench_options() -> str:
    """Each benchmark's own options (the declarations `paraflux bench NAME --help` lists), one list each."""
    from ..bench.registry import BENCHMARKS  # noqa: PLC0415

    parts = []
    for bench in BENCHMARKS.values():
        parser = argparse.ArgumentParser(add_help=False)
        bench.add_arguments(parser)
        lines = [f"- `{_option(action)}`: {_cell(action.help or '')}" for action in parser._actions]
        parts.append(f"#### `paraflux bench {bench.name}`\n\n{bench.title[0].upper()}{bench.title[1:]}.\n\n"
                     + "\n".join(lines))
    return "\n\n".join(parts)


def _option(action) -> str:
    """An option as its help shows it: "--orders P [P ...]", "--no-cpu-loop"."""
    if action.nargs == 0:
        return ", ".join(action.option_strings)
    metavar = action.metavar or action.dest.upper()
    shown = f"{metavar} [{metavar} ...]" if action.nargs == "+" else metavar
    return f"{', '.join(action.option_strings)} {shown}"


def _file_key(schema: Schema, name: str) -> str:
    """Where a variant is set in a problem file (", `[solver] loop`"), "" where no key has its name."""
    sections = [s for s in schema.sections if any(k.name == name for k in s.keys)]
    return f", `{sections[-1].header} {name}`" if sections else ""


def update(text: str) -> str:
    """The page with every generated block rendered afresh."""
    def block(match: re.Match) -> str:
        what, (name, *only) = match.group(2), match.group(3).split()
        render = {"reference": render_reference, "variants": render_variants, "cases": lambda n, _: render_cases(n),
                  "bench": lambda *_: render_bench_options()}
        body = render[what](name, tuple(only))
        return f"{match.group(1)}\n{body}\n\n{match.group(5)}"

    return BLOCK.sub(block, text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m paraflux.engine.problems.reference",
                                     description="Render the generated blocks of the study pages.")
    parser.add_argument("pages", nargs="*", type=Path, help=f"Markdown pages (default: {', '.join(PAGES)})")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="rewrite the pages' generated blocks")
    mode.add_argument("--check", action="store_true", help="exit 1 where a page's generated block is stale")
    args = parser.parse_args(argv)
    pages = args.pages or sorted(page for pattern in PAGES for page in Path().glob(pattern))
    stale = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        fresh = update(text)
        if fresh != text:
            stale.append(page)
            if args.write:
                page.write_text(fresh, encoding="utf-8")
    verb = "rewrote" if args.write else "stale"
    for page in stale:
        print(f"{verb}: {page}")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
