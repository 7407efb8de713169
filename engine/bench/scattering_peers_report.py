"""Markdown for the scattering-peers benchmark (engine/bench/scattering_peers.py): the almond's monostatic
RCS, both polarisations, by the scattering study at the almond example's settings and by bempp-cl's EFIE on the
same surface, the difference, the target, where the difference comes from (the reference refined on the same
facets, the study at other settings), and the time and threads of each."""

from __future__ import annotations

from .report import header, on_host, page, reason, remedy, section, table, target

CUTS = {"theta": ("VV", "theta-polarised incidence, sigma_theta"), "phi": ("HH", "phi-polarised incidence, sigma_phi")}


def references(data: dict) -> list[dict]:
    """bempp-cl's solutions, coarsest first: on the shared surface, then on it split (the same facets; none in
    records from before --reference-splits)."""
    return [{"splits": 0, "triangles": data["triangles"], **data["bempp"]}, *data.get("references", [])]


def settings(data: dict) -> list[dict]:
    """The study's runs at other settings (none in records from before --settings)."""
    return data.get("settings", [])


def largest(ours: dict, peer: dict, phi: list[float], polarization: str) -> tuple[float, float]:
    """The largest |ours - peer| (dB) of one polarisation's RCS (dicts of dBsm lists by polarisation) and the
    phi (degrees) where it is."""
    diff = [abs(a - b) for a, b in zip(ours[polarization], peer[polarization])]
    i = max(range(len(diff)), key=diff.__getitem__)
    return diff[i], phi[i]


def _threads(threads: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in threads.items())


def _efie(ref: dict) -> str:
    return f"bempp-cl EFIE, {ref['triangles']:,} triangles" + (" (split)" if ref["splits"] else "")


def _cut(data: dict, polarization: str) -> list[str]:
    refs, phi = references(data), data["config"]["phi_deg"]
    ours = data["ours"]["rcs_dbsm"][polarization]
    columns = [r["rcs_dbsm"][polarization] for r in refs]
    rows = [(f"{p:g}", f"{ours[i]:.2f}", *(f"{c[i]:.2f}" for c in columns), f"{ours[i] - columns[-1][i]:+.2f}")
            for i, p in enumerate(phi)]
    return table(["phi (deg)", "ParaFlux (dBsm)", *(f"{_efie(r)} (dBsm)" for r in refs),
                  "difference (dB)" if len(refs) == 1 else "difference from the finest EFIE (dB)"],
                 "r" * (len(refs) + 3), rows)


def _setting_lines(data: dict) -> list[str]:
    cfg, ours, peer = data["config"], data["ours"], data["bempp"]
    s, tri, refined = ours["settings"], ours["surface_triangles"], references(data)[1:]
    its = [i for p in CUTS for i in ours["iterations"][p]]
    same = ("the file's own" if tri["scatterer"] == data["triangles"]
            else "the file's, each split into four until no edge exceeds the element size: the same facets")
    return [
        f"- The almond (EMCC shape, 9.936 in, tip toward +x) as {data['triangles']:,} triangles, the same surface "
        f"for both; {data['frequency_hz'] / 1e9:g} GHz; monostatic at theta = 90 deg, phi from {cfg['phi_deg'][0]:g} "
        f"to {cfg['phi_deg'][-1]:g} deg ({len(cfg['phi_deg'])} directions), both polarisations: "
        + "; ".join(f"{name}, {text}" for name, text in CUTS.values()) + ".",
        f"- ParaFlux: the almond example problem (`{data['example']}`) at its settings, only its case replaced by "
        f"that surface as the scatterer file: Nedelec order {s['order']}, {s['elements_per_wavelength']:g} elements "
        f"per wavelength, S' and S built around the scatterer at {s['inner_gap']:g} and {s['outer_gap']:g} "
        f"wavelengths (shells {s['shells']}: {tri['inner']:,} and {tri['outer']:,} triangles), {s['acceleration']} "
        f"to {s['tolerance']:g}, the {s['loop']} loop, {s['linear_solver']} factorisation; the scatterer as "
        f"{tri['scatterer']:,} triangles ({same}){_edge_grading(s)}; {ours['dofs']:,} "
        f"unknowns, {ours['tetrahedra']:,} tetrahedra, {min(its)} to {max(its)} iterations per incidence"
        + ("" if ours["converged"] else ", NOT every incidence converged") + ".",
        f"- Peer: bempp-cl {peer['version']} (PyPI `bempp-cl`), EFIE with RWG trial and SNC test functions on the "
        f"same triangles, {peer['dofs']:,} unknowns, dense assembly by its Numba kernels, one dense LU for every "
        f"incidence (largest relative residual {max(r['residual'] for r in references(data)):.1e}; its "
        "unpreconditioned GMRES did not reach 1e-6 in 18,000 iterations in a first run)"
        + ("" if not refined else "; also on the same facets with every triangle split into four at its edge "
           "midpoints (" + ", ".join(f"{r['triangles']:,} triangles, {r['dofs']:,} unknowns" for r in refined)
           + "), the finest judging the target") + "."]


def _edge_grading(s: dict) -> str:
    """The tetrahedra's grading at the scatterer's sharp edges, as the run recorded it (none in records from
    before it)."""
    if "sharp_edges" not in s:
        return ""
    return (f", the tetrahedra graded from {s['edge_size']:g} of the element size at its {s['sharp_edges']:,} sharp "
            f"edges (facets meeting at more than {s['edge_angle_deg']:g} deg), growing {s['edge_growth']:g} m per m "
            "away")


def _worst(data: dict, ours: dict) -> dict[str, tuple[float, float]]:
    """The largest difference (dB) and its phi per polarisation, of a ParaFlux run from the finest EFIE."""
    return {p: largest(ours["rcs_dbsm"], references(data)[-1]["rcs_dbsm"], data["config"]["phi_deg"], p)
            for p in CUTS}


def _label(setting: dict, defaults: bool = False) -> str:
    s = setting["settings"]
    return (f"order {s['order']}, {s['elements_per_wavelength']:g} per wavelength"
            + (" (the example's defaults)" if defaults else ""))


def _target(data: dict) -> list[str]:
    cfg, refs = data["config"], references(data)
    worst = _worst(data, data["ours"])
    pol = max(worst, key=lambda p: worst[p][0])
    ok = all(w[0] <= cfg["target_db"] for w in worst.values())
    lines = [target(f"The almond example at its defaults within {cfg['target_db']:g} dB of the independent solver "
                    f"on both polarisations (largest difference {worst[pol][0]:.2f} dB, {CUTS[pol][0]} at "
                    f"phi = {worst[pol][1]:g} deg)", ok),
             *(f"  - {CUTS[p][0]}: largest difference {w[0]:.2f} dB at phi = {w[1]:g} deg." for p, w in worst.items())]
    if ok:
        return lines
    if len(refs) > 1:
        moved = max(largest(refs[-1]["rcs_dbsm"], refs[0]["rcs_dbsm"], cfg["phi_deg"], p)[0] for p in CUTS)
        lines.append(reason(f"bempp-cl's solution moves by at most {moved:.2f} dB when its functions are refined "
                            f"on the same facets ({refs[0]['triangles']:,} to {refs[-1]['triangles']:,} triangles), "
                            + (f"so the rest of the {worst[pol][0]:.2f} dB is the study's discretisation at the "
                               "example's defaults on this surface." if moved < worst[pol][0] / 2 else
                               "so the reference's own discretisation is a large part of the difference.")))
    reached = [(s, max(w[0] for w in _worst(data, s).values())) for s in settings(data)]
    reached = [(s, d) for s, d in reached if d <= cfg["target_db"]]
    if reached:
        lines.append(remedy("on this surface, measured below: " + "; ".join(
            f"{_label(s)} ({d:.2f} dB, {s['dofs']:,} unknowns, {s['total_s']:.0f} s)" for s, d in reached) + "."))
    return lines


def _sources(data: dict) -> list[str]:
    """Where the difference comes from: the reference refined on the same facets, the study at other settings."""
    refs, phi = references(data), data["config"]["phi_deg"]
    times = {1: "once", 2: "twice"}
    lines = [f"- bempp-cl with every triangle split into four {times.get(r['splits'], str(r['splits']) + ' times')} "
             f"({r['triangles']:,} triangles, "
             "the same facets): moves from its solution on the shared surface by at most " + " and ".join(
                 f"{largest(r['rcs_dbsm'], refs[0]['rcs_dbsm'], phi, p)[0]:.2f} dB ({CUTS[p][0]})" for p in CUTS)
             + "." for r in refs[1:]]
    rows = [(_label(s, i == 0), f"{s['dofs']:,}", f"{s['total_s']:.1f}",
             *(f"{w[0]:.2f} at {w[1]:g}" for w in _worst(data, s).values()))
            for i, s in enumerate([data["ours"], *settings(data)])]
    return [*lines, *([""] if lines else []),
            *table(["ParaFlux on the same surface", "unknowns", "seconds",
                    *(f"{name}: largest difference (dB) at phi (deg)" for name, _ in CUTS.values())], "lrrrr", rows)]


def render_markdown(data: dict) -> str:
    ours = data["ours"]
    lines = [*header("Scattering against an independent solver: the NASA almond by bempp-cl's EFIE",
                     on_host(data, per_row=True), data), *_setting_lines(data)]
    for p, (name, text) in CUTS.items():
        lines += section(f"{name} ({text})", _cut(data, p))
    lines += section("Target", _target(data))
    if references(data)[1:] or settings(data):
        lines += section("Where the difference comes from", _sources(data))
    timed = [("ParaFlux scattering study (mesh, assembly and factorisation, iterations, far field)", ours),
             *((f"ParaFlux at {_label(s)}", s) for s in settings(data)),
             *((f"{_efie(r)} (assembly {r['assembly_s']:.1f} s"
                + (", with its first-call Numba compilation)" if not r["splits"] else ")"), r)
               for r in references(data))]
    lines += section("Time and threads", [
        *table(["solver", "seconds", "load when it started", "threads"], "lrrl",
               [(name, f"{r['total_s']:.1f}", f"{r['load_before']:.1f}", _threads(r["threads"])) for name, r in timed]),
        "", "The times are of one run each on this host while other work ran on it (see the loads); they show the "
        "scale, not a fair race. The accuracy comparison is the point of this page."])
    return page(lines)
