"""Build the bempp-cl references of tests/test_scattering_emcc_references.py: for the EMCC ogive, double ogive
and cone-sphere at their example problems' frequencies, the monostatic RCS at theta = 90 deg, phi = 0 to 180 deg,
both polarisations (VV: sigma_theta of theta-polarised incidence; HH: sigma_phi of phi-polarised), by bempp-cl's
EFIE (RWG/SNC, dense LU) on the surface each example builds at its defaults, then on it with every triangle split
into four (the same facets) `--splits` times where the dense matrix fits: one small JSON per target here,
bempp-<target>.json, holding every level, the settings and the bempp-cl version.

    .venv/bin/python tests/references/build_bempp_references.py              # solves (~1 h on 2 cores)
    .venv/bin/python tests/references/build_bempp_references.py --from-bench docs/benchmarks/scattering-peers.json

--from-bench takes the same solves from a `paraflux bench scattering-peers` record (which runs this very
bempp-cl code, engine/bench/scattering_peers.bempp_efie) instead of repeating them, and says so in the file."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

from paraflux.engine.bench import scattering_peers as peers
from paraflux.engine.bench.environment import run_facts
from paraflux.engine.problems import case_problem_path
from paraflux.engine.problems.toml_input import read_toml

HERE = Path(__file__).resolve().parent

TARGETS = ("ogive", "double-ogive", "cone-sphere")
OPERATOR = ("bempp-cl EFIE: maxwell.electric_field, RWG trial, SNC test, dense weak form, one scipy LU for "
            "every incidence; far field by maxwell.far_field.electric_field, sigma = 4 pi |E_far . p|^2")


def reference(name: str, levels: list[dict], cfg: peers.PeersBenchConfig, source: dict) -> dict:
    """One target's reference file: levels coarsest first (splits, triangles, dofs, rcs_dbsm, residual)."""
    path = case_problem_path(name)
    example = read_toml(path)
    keep = ("splits", "triangles", "dofs", "residual", "rcs_dbsm", "total_s")
    return {"target": name, "example": "/".join(path.parts[-3:]),
            "frequency_hz": float(example["problem"]["frequency"]), "theta_deg": 90.0,
            "phi_deg": list(cfg.phi_deg), "polarizations": {"theta": "VV, sigma_theta of theta-polarised incidence",
                                                            "phi": "HH, sigma_phi of phi-polarised incidence"},
            "surface": "engine.scattering.emcc.body_surface(name, wavelength / the example's default elements "
                       "per wavelength): the example's own scatterer; each level splits every triangle into four",
            "operator": OPERATOR, "bempp_cl": levels[0]["version"],
            "levels": [{k: level[k] for k in keep if k in level} for level in levels], **source}


def solved(name: str, cfg: peers.PeersBenchConfig, splits: int) -> list[dict]:
    """bempp-cl's levels for one target, solved here."""
    example = read_toml(case_problem_path(name))
    body = peers.shared_surface(name, example, cfg)
    frequency = float(example["problem"]["frequency"])
    levels = [{"splits": 0, "triangles": len(body.triangles), **peers.bempp_efie(frequency, cfg.phi_deg, body)}]
    for s in range(1, splits + 1):
        split = peers.split_surface(body, s)
        if not peers.dense_fits(len(split.triangles)):
            break
        levels.append({"splits": s, "triangles": len(split.triangles),
                       **peers.bempp_efie(frequency, cfg.phi_deg, split)})
        print(f"{name}: {len(split.triangles):,} triangles {levels[-1]['total_s']:.0f} s", flush=True)
    return levels


def from_bench(record: dict, name: str) -> tuple[list[dict], peers.PeersBenchConfig]:
    """bempp-cl's levels for one target as a scattering-peers record holds them."""
    t = next((t for t in record.get("targets", []) if t["target"] == name), None)
    if t is None:
        raise SystemExit(f"the bench record holds no {name}")
    levels = [{"splits": 0, "triangles": t["triangles"], **t["bempp"]}, *t["references"]]
    return levels, replace(peers.PeersBenchConfig(), phi_deg=tuple(t["config"]["phi_deg"]))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--targets", nargs="+", choices=TARGETS, default=list(TARGETS))
    parser.add_argument("--splits", type=int, default=1, help="refinement levels past the shared surface (default 1)")
    parser.add_argument("--from-bench", type=Path, metavar="RESULTS.json",
                        help="take the solves from this scattering-peers record instead of solving")
    args = parser.parse_args(argv)
    record = json.loads(args.from_bench.read_text()) if args.from_bench else None
    for name in args.targets:
        if record is None:
            cfg = peers.PeersBenchConfig()
            levels = solved(name, cfg, args.splits)
            source = {"built_by": " ".join(["tests/references/build_bempp_references.py", *(argv or sys.argv[1:])]),
                      **{k: v for k, v in run_facts().items() if k in ("date", "commit")}}
        else:
            levels, cfg = from_bench(record, name)
            source = {"built_by": f"tests/references/build_bempp_references.py --from-bench {args.from_bench}: "
                                  f"the solves of `{record['command']}`",
                      "date": record["date"], "commit": record["commit"]}
        out = HERE / f"bempp-{name}.json"
        out.write_text(json.dumps(reference(name, levels, cfg, source), indent=1) + "\n")
        print(f"wrote {out.relative_to(HERE.parents[1])}", flush=True)


if __name__ == "__main__":
    main()
