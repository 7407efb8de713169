"""Markdown for the scattering-peers benchmark (engine/bench/scattering_peers.py): the almond's monostatic
RCS by the scattering study and by bempp-cl's EFIE on the same surface, the difference, and the time of each."""

from __future__ import annotations

from .report import header, on_host, page, row, table, verdict


def render_markdown(data: dict) -> str:
    cfg, ours, peer = data["config"], data["ours"], data["bempp"]
    worst = max(abs(a - b) for a, b in zip(ours["rcs_dbsm"], peer["rcs_dbsm"]))
    lines = [
        *header("Scattering against an independent solver: the NASA almond by bempp-cl's EFIE",
                on_host(data, per_row=False), data),
        f"- The almond (EMCC shape, 9.936 in, tip toward +x) as {data['triangles']:,} triangles, the same surface for "
        f"both; {cfg['frequency_hz'] / 1e9:g} GHz; monostatic at theta = 90 deg, theta-polarised, sigma_theta.",
        "- ParaFlux: the scattering study with that surface as the scatterer file and S', S enclosing ellipsoids at "
        "the default gaps (0.1, 0.2 wavelengths), Nedelec order 1, GMRES to 1e-4, the zgemm loop on the host; "
        f"{ours['dofs']:,} unknowns, iterations {ours['iterations']}.",
        f"- Peer: bempp-cl {peer['version']} (PyPI `bempp-cl`), EFIE with RWG trial and SNC test functions on the "
        f"same triangles, {peer['dofs']:,} unknowns, dense assembly by its Numba kernels on "
        f"{peer['numba_threads']} threads, one dense LU for every incidence (largest relative residual "
        f"{peer['residual']:.1e}; its unpreconditioned GMRES did not reach 1e-6 in 18,000 iterations in a first run).",
        "", *table(["phi (deg)", "ParaFlux (dBsm)", "bempp-cl EFIE (dBsm)", "difference (dB)"], "rrrr",
                   [(f"{phi:g}", f"{a:.2f}", f"{b:.2f}", f"{a - b:+.2f}")
                    for phi, a, b in zip(cfg["phi_deg"], ours["rcs_dbsm"], peer["rcs_dbsm"])])]
    lines += ["", f"Target: monostatic RCS within {cfg['target_db']:g} dB of the independent solver: "
              f"**{verdict(worst <= cfg['target_db'])}** (largest difference {worst:.2f} dB).", "",
              *table(["solver", "seconds"], "lr"),
              row(["ParaFlux scattering study (mesh, assembly and factorisation, iterations, far field)",
                   f"{ours['total_s']:.1f}"]),
              row([f"bempp-cl EFIE (assembly {peer['assembly_s']:.1f} s, with its first-call Numba compilation)",
                   f"{peer['total_s']:.1f}"]), "",
              "The times are of one run each on this host while other work ran on it (see the load above); they "
              "show the scale, not a fair race. The accuracy comparison is the point of this table."]
    return page(lines)
