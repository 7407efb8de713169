"""The docs are checked: each study page's problem-file reference names exactly the keys its parser accepts (keys
fed to the parser, not compared with the declaration it renders), the generated blocks are current, every
relative link in README.md and docs/ resolves, and every shell block marked ```sh example runs."""

from __future__ import annotations

import ast
import copy
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from paraflux.engine.errors import ProblemError
from paraflux.engine.problems import parse_problem, problem_as_dict
from paraflux.engine.problems.reference import update
from paraflux.engine.problems.toml_input import read_toml

ROOT = Path(__file__).resolve().parents[1]
STUDY_PAGES = sorted((ROOT / "docs" / "studies").glob("*.md"))
MARKDOWN = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
PROBLEMS = ROOT / "resources" / "problems"
# A base problem per kind that holds an instance of every table (the tables it lacks are added here).
BASES = {
    "magnetostatic": ("magnetostatics.md", "transformer.toml", {}),
    "elasticity": ("elasticity.md", "cantilever.toml", {"case": {}}),  # [case] is read with case = "..."
    "elastostatic-bem": ("fmbem.md", "bar.toml", {"case": {}}),
    "truncation": ("truncation.md", "sphere-in-box.toml", {"case": {}, "random_sources": {"count": 1}}),
    "scattering": ("scattering.md", "pec-sphere.toml", {}),
}
BLOCK = re.compile(r"<!-- BEGIN reference ([^>]*?) -->(.*?)<!-- END reference -->", re.S)
HEADING = re.compile(r"^### `\[\[?([^\]]+)\]\]?`", re.M)
ROW = re.compile(r"^\| `([^`]+)` \|", re.M)


def documented(page: Path) -> list[tuple[list[str], dict[str, set[str]]]]:
    """Each reference block of a page: its marker's words (kind, then any SECTION.KEY) and the keys it lists
    under each table heading."""
    blocks = []
    for marker, body in BLOCK.findall(page.read_text(encoding="utf-8")):
        sections: dict[str, set[str]] = {}
        for part in re.split(r"(?=^### )", body, flags=re.M):
            heading = HEADING.match(part)
            if heading:
                sections[heading.group(1)] = set(ROW.findall(part))
        blocks.append((marker.split(), sections))
    return blocks


def base_problem(kind: str) -> dict:
    _, file, extra = BASES[kind]
    data = read_toml(PROBLEMS / file)
    data.update(copy.deepcopy(extra))
    return data


def table_in(data: dict, section: str) -> dict:
    """The table of `data` a section heading names: 'solver', 'regions.NAME' (the base's first), 'probes'
    (the first of the array)."""
    head, _, rest = section.partition(".")
    value = data.setdefault(head, {})
    if isinstance(value, list):
        return value[0]
    return value[next(iter(value))] if rest == "NAME" else value


def refused(kind: str, section: str, key: str) -> bool:
    """Whether the parser refuses `key` in `section` (None: a top-level table) as an unknown key."""
    data = base_problem(kind)
    if section is None:
        data[key] = {}
    else:
        table_in(data, section)[key] = "x"  # a recognised key may refuse the value: not 'unknown'
    try:
        parse_problem(data, PROBLEMS)
    except ProblemError as exc:
        unknown = re.search(r"unknown key\(s\): (.*)$", str(exc))
        return bool(unknown) and key in unknown.group(1).split(", ")
    return False


def candidate_keys(kind: str) -> set[str]:
    """Names the parser might take without the page saying so: every identifier-like string literal of the
    problem parsers and the variant registry, and every key the study's problem-file writer writes."""
    names = set()
    for path in [*(ROOT / "engine" / "problems").glob("*.py"), ROOT / "engine" / "variants.py"]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                    re.fullmatch(r"[a-z][a-z0-9_]{0,40}", node.value):
                names.add(node.value)
    written = problem_as_dict(parse_problem(base_problem(kind), PROBLEMS))
    stack = [written]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            names.update(value)
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return names


def test_every_study_has_a_page_with_its_reference():
    from paraflux.engine.problems.reference import schemas
    from paraflux.engine.studies import STUDIES

    assert {s.problem_kind for s in STUDIES.values()} == set(BASES) == set(schemas())


@pytest.mark.parametrize("kind", list(BASES))
def test_the_page_lists_every_key_the_parser_accepts_and_no_other(kind):
    page = ROOT / "docs" / "studies" / BASES[kind][0]
    [(marker, sections)] = [b for b in documented(page) if b[0] == [kind]]
    parse_problem(base_problem(kind), PROBLEMS)  # the base itself is valid
    tables = {name.partition(".")[0] for name in sections}
    named_refused = [f"[{s}] {k}" for s, keys in sections.items() for k in keys if refused(kind, s, k)]
    assert not named_refused, f"{page.name} names keys the parser refuses: {named_refused}"
    candidates = candidate_keys(kind) | {k for keys in sections.values() for k in keys}
    missing = [f"[{t}]" for t in sorted(candidates - tables) if not refused(kind, None, t)]
    for section, keys in sections.items():
        missing += [f"[{section}] {k}" for k in sorted(candidates - keys) if not refused(kind, section, k)]
    assert not missing, f"the parser accepts keys {page.name} does not list: {missing}"


def test_a_partial_reference_names_only_keys_its_parser_accepts():
    partial = [(page, marker, sections) for page in STUDY_PAGES for marker, sections in documented(page)
               if len(marker) > 1]
    assert partial  # the colouring page's [solver] keys
    for page, (kind, *_), sections in partial:
        for section, keys in sections.items():
            assert keys and not [k for k in keys if refused(kind, section, k)], (page.name, section)


def test_the_check_finds_an_unlisted_key_and_a_refused_one():
    assert refused("magnetostatic", "solver", "speed")
    assert not refused("magnetostatic", "solver", "check_every")
    assert refused("scattering", None, "regions") and not refused("scattering", None, "far_field")


@pytest.mark.parametrize("page", [*STUDY_PAGES, ROOT / "docs" / "benchmarks.md"], ids=lambda p: p.name)
def test_generated_blocks_are_current(page):
    text = page.read_text(encoding="utf-8")
    assert "<!-- BEGIN " in text
    assert update(text) == text, (f"{page.name} is stale: run python -m paraflux.engine.problems.reference "
                                  "--write")


LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)|<(?:img|a) [^>]*(?:src|href)=\"([^\"]+)\"")


def slugs(page: Path) -> set[str]:
    """GitHub's anchors of a page's headings."""
    out = set()
    for heading in re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        out.add(slug)
    return out


def test_every_relative_link_resolves():
    broken = []
    for page in MARKDOWN:
        text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
        for groups in LINK.findall(text):
            target = groups[0] or groups[1]
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            resolved = (page.parent / path).resolve() if path else page
            if not resolved.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
            elif anchor and resolved.suffix == ".md" and anchor not in slugs(resolved):
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert not broken, broken


def examples() -> list[tuple[str, str]]:
    found = []
    for page in MARKDOWN:
        text = page.read_text(encoding="utf-8")
        for match in re.finditer(r"^```sh example\n(.*?)^```", text, flags=re.S | re.M):
            line = text[:match.start()].count("\n") + 1
            found.append((f"{page.relative_to(ROOT)}:{line}", match.group(1)))
    return found


def test_the_readme_and_every_study_page_show_an_example():
    pages = {where.split(":")[0] for where, _ in examples()}
    assert "README.md" in pages
    assert {f"docs/studies/{p.name}" for p in STUDY_PAGES} <= pages


@pytest.mark.parametrize("where, script", examples(), ids=[w for w, _ in examples()])
def test_the_example_runs(where, script, tmp_path):
    """Run as a reader would, from a folder holding the checkout's resources/, with the environment's
    paraflux first on PATH."""
    (tmp_path / "resources").symlink_to(ROOT / "resources")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    run = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, f"{where} failed ({run.returncode}):\n{run.stdout[-2000:]}\n{run.stderr[-2000:]}"
