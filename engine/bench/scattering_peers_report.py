"""Markdown for the scattering-peers benchmark (engine/bench/scattering_peers.py): the almond's monostatic
RCS, both polarisations, by the scattering study at the almond example's settings and by bempp-cl's EFIE on the
same surface, the difference, the target, and the time and threads of each."""

from __future__ import annotations

from .report import header, on_host, page, row, section, table, target

CUTS = {"theta": ("VV", "theta-polarised incidence, sigma_theta"), "phi": ("HH", "phi-polarised incidence, sigma_phi")}


def differences(data: dict) -> dict[str, list[float]]:
    """ParaFlux minus bempp-cl (dB) per polarisation and phi."""
    return {p: [a - b for a, b in zip(data["ours"]["rcs_dbsm"][p], data["bempp"]["rcs_dbsm"][p])] for p in CUTS}


def largest(data: dict, polarization: str) -> tuple[float, float]:
    """The largest |difference| (dB) of one polarisation and the phi (degrees) where it is."""
    diff = differences(data)[polarization]
    i = max(range(len(diff)), key=lambda j: abs(diff[j]))
    return abs(diff[i]), data["config"]["phi_deg"][i]


def _threads(threads: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in threads.items())


def _cut(data: dict, polarization: str) -> list[str]:
    ours, peer, phi = data["ours"]["rcs_dbsm"][polarization], data["bempp"]["rcs_dbsm"][polarization], \
        data["config"]["phi_deg"]
    return table(["phi (deg)", "ParaFlux (dBsm)", "bempp-cl EFIE (dBsm)", "difference (dB)"], "rrrr",
                 [(f"{p:g}", f"{a:.2f}", f"{b:.2f}", f"{a - b:+.2f}") for p, a, b in zip(phi, ours, peer)])


def _setting_lines(data: dict) -> list[str]:
    cfg, ours, peer = data["config"], data["ours"], data["bempp"]
    s, tri = ours["settings"], ours["surface_triangles"]
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
        f"{tri['scatterer']:,} triangles ({same}); {ours['dofs']:,} "
        f"unknowns, {ours['tetrahedra']:,} tetrahedra, {min(its)} to {max(its)} iterations per incidence"
        + ("" if ours["converged"] else ", NOT every incidence converged") + ".",
        f"- Peer: bempp-cl {peer['version']} (PyPI `bempp-cl`), EFIE with RWG trial and SNC test functions on the "
        f"same triangles, {peer['dofs']:,} unknowns, dense assembly by its Numba kernels, one dense LU for every "
        f"incidence (largest relative residual {peer['residual']:.1e}; its unpreconditioned GMRES did not reach "
        "1e-6 in 18,000 iterations in a first run)."]


def render_markdown(data: dict) -> str:
    cfg, ours, peer = data["config"], data["ours"], data["bempp"]
    worst = {p: largest(data, p) for p in CUTS}
    polarization = max(worst, key=lambda p: worst[p][0])
    ok = all(w[0] <= cfg["target_db"] for w in worst.values())
    lines = [*header("Scattering against an independent solver: the NASA almond by bempp-cl's EFIE",
                     on_host(data, per_row=True), data), *_setting_lines(data)]
    for p, (name, text) in CUTS.items():
        lines += section(f"{name} ({text})", _cut(data, p))
    lines += section("Target", [
        target(f"The almond example at its defaults within {cfg['target_db']:g} dB of the independent solver on "
               f"both polarisations (largest difference {worst[polarization][0]:.2f} dB, "
               f"{CUTS[polarization][0]} at phi = {worst[polarization][1]:g} deg)", ok),
        *(f"  - {CUTS[p][0]}: largest difference {w[0]:.2f} dB at phi = {w[1]:g} deg." for p, w in worst.items())])
    lines += section("Time and threads", [
        *table(["solver", "seconds", "load when it started", "threads"], "lrrl"),
        row(["ParaFlux scattering study (mesh, assembly and factorisation, iterations, far field)",
             f"{ours['total_s']:.1f}", f"{ours['load_before']:.1f}", _threads(ours["threads"])]),
        row([f"bempp-cl EFIE (assembly {peer['assembly_s']:.1f} s, with its first-call Numba compilation)",
             f"{peer['total_s']:.1f}", f"{peer['load_before']:.1f}", _threads(peer["threads"])]), "",
        "The times are of one run each on this host while other work ran on it (see the loads); they show the "
        "scale, not a fair race. The accuracy comparison is the point of this page."])
    return page(lines)
