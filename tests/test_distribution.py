"""pyproject.toml ships every package and every data file the code loads, so a wheel (not only the
editable install the suite runs from) has all of ParaFlux."""

import fnmatch
import subprocess
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def package_of(folder: Path) -> str:
    """The installed name of a source folder, through the package-dir mapping."""
    for package, source in SETUPTOOLS["package-dir"].items():
        if folder == ROOT / source or ROOT / source in folder.parents:
            return ".".join([package, *folder.relative_to(ROOT / source).parts])
    raise AssertionError(f"{folder} is outside every mapped folder")


def test_every_package_is_listed():
    found = {package_of(init.parent) for source in SETUPTOOLS["package-dir"].values()
             for init in (ROOT / source).rglob("__init__.py")}
    assert found == set(SETUPTOOLS["packages"])


def test_every_tracked_data_file_is_package_data():
    tracked = subprocess.run(["git", "ls-files", *SETUPTOOLS["package-dir"].values()], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout.split()
    missing = []
    for name in tracked:
        path = ROOT / name
        if path.suffix == ".py":
            continue
        folder = next(p for p in path.parents if (p / "__init__.py").exists())
        globs = SETUPTOOLS["package-data"].get(package_of(folder), [])
        if not any(fnmatch.fnmatch(path.relative_to(folder).as_posix(), g) for g in globs):
            missing.append(name)
    assert not missing, f"not in [tool.setuptools.package-data]: {missing}"
