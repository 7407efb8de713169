"""Markdown for the scattering-peers benchmark (engine/bench/scattering_peers.py): per target (the NASA almond,
the EMCC ogive, double ogive and cone-sphere) the monostatic RCS, both polarisations, by the scattering study at
its example's settings and by bempp-cl's EFIE on the same surface, the difference where the finest reference is
within the region of its peak, the target, where the difference comes from (the reference refined on the same
facets, the study at other settings), and the time and threads of each; a summary row per target first."""

from __future__ import annotations

from .report import header, on_host, page, reason, remedy, run_named, table, target

CUTS = {"theta": ("VV", "theta-polarised incidence, sigma_theta"), "phi": ("HH", "phi-polarised incidence, sigma_phi")}
NAMES = {"nasa-almond": "the NASA almond", "ogive": "the EMCC ogive", "double-ogive": "the EMCC double ogive",
         "cone-sphere": "the EMCC cone-sphere"}
REGION_DB = 30.0  # the comparison region of records from before it was recorded: where the reference is within
#                   this of its peak (every direction of the almond's record of 2026-11-27)
PEER = ("EFIE with RWG trial and SNC test functions on the same triangles, dense assembly by its Numba kernels, one "
        "dense LU for every incidence (its unpreconditioned GMRES did not reach 1e-6 in 18,000 iterations on the "
        "almond in a first run)")


def targets_of(data: dict) -> list[dict]:
    """A record's targets; a record from before there were several is the almond's alone."""
    return data["targets"] if "targets" in data else [{**data, "target": "nasa-almond"}]


def references(t: dict) -> list[dict]:
    """A target's bempp-cl solutions, coarsest first: on the shared surface, then on it split (the same facets;
    none in records from before --reference-splits)."""
    return [{"splits": 0, "triangles": t["triangles"], **t["bempp"]}, *t.get("references", [])]


def settings(t: dict) -> list[dict]:
    """The study's runs at other settings (none in records from before --settings)."""
    return t.get("settings", [])


def region(t: dict, polarization: str) -> list[bool]:
    """Per phi: whether the finest reference's RCS of this polarisation is within the region (dB) of its peak."""
    finest = references(t)[-1]["rcs_dbsm"][polarization]
    return [v >= max(finest) - t["config"].get("region_db", REGION_DB) for v in finest]


def largest(ours: dict, peer: dict, phi: list[float], polarization: str, inside=None) -> tuple[float, float]:
    """The largest |ours - peer| (dB) of one polarisation's RCS (dicts of dBsm lists by polarisation) and the
    phi (degrees) where it is, over the phi that inside (bools, default all) keeps."""
    diff = [abs(a - b) if keep else -1.0 for a, b, keep in
            zip(ours[polarization], peer[polarization], inside or [True] * len(phi))]
    i = max(range(len(diff)), key=diff.__getitem__)
    return diff[i], phi[i]


def _threads(threads: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in threads.items())


def _efie(ref: dict) -> str:
    return f"bempp-cl EFIE, {ref['triangles']:,} triangles" + (" (split)" if ref["splits"] else "")


def _cut(t: dict, polarization: str) -> list[str]:
    refs, phi, inside = references(t), t["config"]["phi_deg"], region(t, polarization)
    ours = t["ours"]["rcs_dbsm"][polarization]
    columns = [r["rcs_dbsm"][polarization] for r in refs]
    rows = [(f"{p:g}", f"{ours[i]:.2f}", *(f"{c[i]:.2f}" for c in columns),
             f"{ours[i] - columns[-1][i]:+.2f}" + ("" if inside[i] else " (outside)")) for i, p in enumerate(phi)]
    return table(["phi (deg)", "ParaFlux (dBsm)", *(f"{_efie(r)} (dBsm)" for r in refs),
                  "difference (dB)" if len(refs) == 1 else "difference from the finest EFIE (dB)"],
                 "r" * (len(refs) + 3), rows)


def _shape(t: dict) -> str:
    """The target and its surface, shared by both solvers."""
    if t["target"] == "nasa-almond":
        return f"The almond (EMCC shape, 9.936 in, tip toward +x) as {t['triangles']:,} triangles, the same surface"
    body = t["body"]
    return (f"{NAMES[t['target']][0].upper()}{NAMES[t['target']][1:]} ({body['length_in']:g} in long, "
            f"{body['radius_in']:g} in in radius, axis along x) as {t['triangles']:,} triangles, the surface its "
            "example builds at its defaults, the same")


def _setting_lines(t: dict) -> list[str]:
    cfg, ours, peer = t["config"], t["ours"], t["bempp"]
    s, tri, refined = ours["settings"], ours["surface_triangles"], references(t)[1:]
    its = [i for p in CUTS for i in ours["iterations"][p]]
    own = s.get("case") == t["target"]
    same = ("the example's own" if own else "the file's own" if tri["scatterer"] == t["triangles"]
            else "the file's, each split into four until no edge exceeds the element size: the same facets")
    skipped = t.get("reference_skipped")
    return [
        *([f"- Measured by an earlier run: {run_named(t['run'])}."
           + (" That run was cut short: it holds only the solves it finished." if t["run"].get("cut_short") else "")]
          if "run" in t else []),
        f"- {_shape(t)} for both; {t['frequency_hz'] / 1e9:g} GHz; monostatic at theta = 90 deg, phi from "
        f"{cfg['phi_deg'][0]:g} to {cfg['phi_deg'][-1]:g} deg ({len(cfg['phi_deg'])} directions), both "
        "polarisations: " + "; ".join(f"{name}, {text}" for name, text in CUTS.values()) + ".",
        f"- ParaFlux: the example problem (`{t['example']}`) at its settings, "
        + ("run as it is (only its incidences are the bench's)" if own else
           "only its case replaced by that surface as the scatterer file")
        + f": Nedelec order {s['order']}, {s['elements_per_wavelength']:g} elements "
        f"per wavelength, S' and S built around the scatterer at {s['inner_gap']:g} and {s['outer_gap']:g} "
        f"wavelengths (shells {s['shells']}: {tri['inner']:,} and {tri['outer']:,} triangles), {s['acceleration']} "
        f"to {s['tolerance']:g}, the {s['loop']} loop, {s['linear_solver']} factorisation; the scatterer as "
        f"{tri['scatterer']:,} triangles ({same}){_edge_grading(s)}; {ours['dofs']:,} "
        f"unknowns, {ours['tetrahedra']:,} tetrahedra, {min(its)} to {max(its)} iterations per incidence"
        + ("" if ours["converged"] else ", NOT every incidence converged") + ".",
        f"- Peer: bempp-cl {peer['version']} (PyPI `bempp-cl`), {PEER}; {peer['dofs']:,} unknowns on the shared "
        f"surface (largest relative residual {max(r['residual'] for r in references(t)):.1e})"
        + ("" if not refined else "; also on the same facets with every triangle split into four at its edge "
           "midpoints (" + ", ".join(f"{r['triangles']:,} triangles, {r['dofs']:,} unknowns" for r in refined)
           + "), the finest judging the target")
        + ("" if not skipped else f"; split {skipped['splits']} times ({skipped['triangles']:,} triangles) its "
           "dense matrix and LU factors would not fit in this host's memory, so not solved") + ".",
        f"- Compared where the finest reference is within {cfg.get('region_db', REGION_DB):g} dB of its peak "
        "(the directions outside are marked)."]


def _edge_grading(s: dict) -> str:
    """The tetrahedra's grading at the scatterer's sharp edges, as the run recorded it (none in records from
    before it)."""
    if "sharp_edges" not in s:
        return ""
    return (f", the tetrahedra graded from {s['edge_size']:g} of the element size at its {s['sharp_edges']:,} sharp "
            f"edges (facets meeting at more than {s['edge_angle_deg']:g} deg), growing {s['edge_growth']:g} m per m "
            "away")


def _worst(t: dict, ours: dict) -> dict[str, tuple[float, float]]:
    """The largest difference (dB) in the region and its phi per polarisation, of a ParaFlux run from the
    finest EFIE."""
    return {p: largest(ours["rcs_dbsm"], references(t)[-1]["rcs_dbsm"], t["config"]["phi_deg"], p, region(t, p))
            for p in CUTS}


def _moved(t: dict, ref: dict) -> dict[str, float]:
    """How far (dB) a reference level lies from the coarsest, per polarisation, in the region."""
    return {p: largest(ref["rcs_dbsm"], references(t)[0]["rcs_dbsm"], t["config"]["phi_deg"], p, region(t, p))[0]
            for p in CUTS}


def _label(setting: dict, defaults: bool = False) -> str:
    s = setting["settings"]
    return (f"order {s['order']}, {s['elements_per_wavelength']:g} per wavelength"
            + (" (the example's defaults)" if defaults else ""))


def _target(t: dict) -> list[str]:
    cfg, refs = t["config"], references(t)
    worst = _worst(t, t["ours"])
    pol = max(worst, key=lambda p: worst[p][0])
    ok = all(w[0] <= cfg["target_db"] for w in worst.values())
    lines = [target(f"{NAMES[t['target']][0].upper()}{NAMES[t['target']][1:]} example at its defaults within "
                    f"{cfg['target_db']:g} dB of the independent solver on both polarisations where the reference "
                    f"is within {cfg.get('region_db', REGION_DB):g} dB of its peak (largest difference "
                    f"{worst[pol][0]:.2f} dB, {CUTS[pol][0]} at phi = {worst[pol][1]:g} deg)", ok),
             *(f"  - {CUTS[p][0]}: largest difference {w[0]:.2f} dB at phi = {w[1]:g} deg." for p, w in worst.items())]
    if ok:
        return lines
    if len(refs) > 1:
        moved = max(_moved(t, refs[-1]).values())
        lines.append(reason(f"bempp-cl's solution moves by at most {moved:.2f} dB when its functions are refined "
                            f"on the same facets ({refs[0]['triangles']:,} to {refs[-1]['triangles']:,} triangles), "
                            + (f"so the rest of the {worst[pol][0]:.2f} dB is the study's discretisation at the "
                               "example's defaults on this surface." if moved < worst[pol][0] / 2 else
                               "so the reference's own discretisation is a large part of the difference.")))
    reached = [(s, max(w[0] for w in _worst(t, s).values())) for s in settings(t)]
    reached = [(s, d) for s, d in reached if d <= cfg["target_db"]]
    if reached:
        lines.append(remedy("on this surface, measured below: " + "; ".join(
            f"{_label(s)} ({d:.2f} dB, {s['dofs']:,} unknowns, {s['total_s']:.0f} s)" for s, d in reached) + "."))
    return lines


def _sources(t: dict) -> list[str]:
    """Where the difference comes from: the reference refined on the same facets, the study at other settings."""
    refs = references(t)
    times = {1: "once", 2: "twice"}
    lines = [f"- bempp-cl with every triangle split into four {times.get(r['splits'], str(r['splits']) + ' times')} "
             f"({r['triangles']:,} triangles, the same facets): moves from its solution on the shared surface by at "
             "most " + " and ".join(f"{d:.2f} dB ({CUTS[p][0]})" for p, d in _moved(t, r).items())
             + " in the region: the reference's own uncertainty." for r in refs[1:]]
    rows = [(_label(s, i == 0), f"{s['dofs']:,}", f"{s['total_s']:.1f}",
             *(f"{w[0]:.2f} at {w[1]:g}" for w in _worst(t, s).values()))
            for i, s in enumerate([t["ours"], *settings(t)])]
    return [*lines, *([""] if lines else []),
            *table(["ParaFlux on the same surface", "unknowns", "seconds",
                    *(f"{name}: largest difference (dB) at phi (deg)" for name, _ in CUTS.values())], "lrrrr", rows)]


def _times(t: dict) -> list[str]:
    timed = [("ParaFlux scattering study (mesh, assembly and factorisation, iterations, far field)", t["ours"]),
             *((f"ParaFlux at {_label(s)}", s) for s in settings(t)),
             *((f"{_efie(r)} (assembly {r['assembly_s']:.1f} s)", r) for r in references(t))]
    return table(["solver", "seconds", "load when it started", "threads"], "lrrl",
                 [(name, f"{r['total_s']:.1f}", f"{r['load_before']:.1f}", _threads(r["threads"])) for name, r in timed])


def _summary(targets: list[dict]) -> list[str]:
    rows = []
    for t in targets:
        refs, worst = references(t), _worst(t, t["ours"])
        moved = _moved(t, refs[-1]) if len(refs) > 1 else None
        rows.append((NAMES[t["target"]], f"{t['frequency_hz'] / 1e9:g}", f"{t['triangles']:,}",
                     f"{t['ours']['dofs']:,}", f"{t['ours']['total_s']:.1f}", f"{refs[-1]['dofs']:,}",
                     *(f"{moved[p]:.2f}" if moved else "not refined" for p in CUTS),
                     *(f"{w[0]:.2f} at {w[1]:g}" for w in worst.values()),
                     "yes" if all(w[0] <= t["config"]["target_db"] for w in worst.values()) else "NO"))
    return table(["target", "GHz", "shared surface (triangles)", "ParaFlux unknowns", "ParaFlux seconds",
                  "finest reference (unknowns)", "reference's own change, VV (dB)", "reference's own change, HH (dB)",
                  "VV: largest difference (dB) at phi (deg)", "HH: largest difference (dB) at phi (deg)",
                  "within 1 dB"], "lrrrrrrrrrl", rows)


def _part(level: str, title: str, lines: list[str]) -> list[str]:
    return ["", f"{level} {title}", "", *lines]


def _target_parts(t: dict, level: str) -> list[str]:
    lines = []
    for p, (name, text) in CUTS.items():
        lines += _part(level, f"{name} ({text})", _cut(t, p))
    lines += _part(level, "Target", _target(t))
    if references(t)[1:] or settings(t):
        lines += _part(level, "Where the difference comes from", _sources(t))
    return lines + _part(level, "Time and threads", _times(t))


def render_markdown(data: dict) -> str:
    targets = targets_of(data)
    names = [NAMES[t["target"]] for t in targets]
    title = " and ".join(filter(None, [", ".join(names[:-1]), names[-1]]))
    lines = [*header(f"Scattering against an independent solver: {title} by bempp-cl's EFIE",
                     on_host(data, per_row=True), data)]
    if len(targets) == 1:
        lines += [*_setting_lines(targets[0]), *_target_parts(targets[0], "##")]
    else:
        lines += ["- Each target through its example problem at its defaults (only its incidences the bench's) and "
                  "bempp-cl on the same triangles, then on them split into four (the same facets) where its dense "
                  "matrix fits: the change between the levels is the reference's own uncertainty. The difference is "
                  "judged against the finest reference where it is within the region of its peak.",
                  *_part("##", "Summary", _summary(targets))]
        for t in targets:
            lines += _part("##", f"{NAMES[t['target']][0].upper()}{NAMES[t['target']][1:]}",
                           [*_setting_lines(t), *_target_parts(t, "###")])
    return page([*lines, "", "The times are of one run each on this host while other work ran on it (see the loads); "
                 "they show the scale, not a fair race. The accuracy comparison is the point of this page."])
