"""Markdown tables of `paraflux bench coloring`, rendered from the JSON record (no number typed by hand)."""

from __future__ import annotations

from .coloring import PAPER_TABLE_1, PAPER_TABLE_3
from .report import header, page, row, section, table, target

METHODS = ("ccm", "fcm", "ofcm", "parallel-gpu", "parallel-numpy")
PAPER_SIZE = 171338


def _ms(seconds: float) -> str:
    return f"{1e3 * seconds:.3g}"


def _header_and_times(data: dict) -> list[str]:
    """Run facts, then colouring time and colours per mesh and method."""
    gpu = data["gpu"]
    lines = [
        *header("Element colouring benchmark: paper 002 Tables 1 and 3 and beyond",
                f"- Device: {gpu['device']}; host CPU {data['host_cpu']} (sequential methods on one core, Numba)",
                data),
        f"- Times are medians of {data['config']['repeats']} runs after a warm-up (compilation excluded). "
        "ccm, fcm, ofcm: paper 002's Algorithms 1-3; parallel: Jones-Plassmann rounds on the GPU (CuPy) and "
        "the same rounds vectorised in NumPy; NetworkX: `greedy_color(strategy='largest_first')` on the same "
        f"element graph (graph construction timed apart), run up to {data['config']['networkx_up_to']:,} "
        "elements. Raw numbers: `coloring.json`.",
        "- Lower bound: the most elements meeting at one node (they must all differ).",
        "",
        "## Colouring time (ms) and colours used",
        "",
        *table(["mesh", "elements", "lower bound", *METHODS, "NetworkX"], "l" + "r" * (3 + len(METHODS))),
    ]
    for mesh in data["meshes"]:
        cells = [mesh["case"], f"{mesh['elements']:,}", str(mesh["lower_bound"])]
        cells += [f"{_ms(mesh['methods'][m]['seconds'])} ({mesh['methods'][m]['colors']})" for m in METHODS]
        nx = mesh.get("networkx")
        cells.append(f"{_ms(nx['seconds'])} ({nx['colors']})" if nx else "not run")
        lines.append(row(cells))
    return lines


def _balance(data: dict) -> list[str]:
    """Group balance before and after the balancing pass."""
    lines = ["", "In brackets: colours used.", "",
              "## Group balance: smallest / largest group (ratio), before and after the balancing pass", "",
              *table(["mesh", "elements", *METHODS, "balancing time (ms, ofcm)"], "l" + "r" * (2 + len(METHODS)))]
    for mesh in data["meshes"]:
        cells = [mesh["case"], f"{mesh['elements']:,}"]
        for m in METHODS:
            r = mesh["methods"][m]
            cells.append(f"{r['smallest']}/{r['largest']} ({r['ratio']:.1f}) -> {r['balanced']['ratio']:.2f}")
        cells.append(_ms(mesh["methods"]["ofcm"]["balance_seconds"]))
        lines.append(row(cells))
    return lines


def _against_paper(data: dict) -> list[str]:
    """Against paper 002's Tables 1 and 3."""
    lines = section("Against the paper", [
             *table(["mesh", "elements", "paper OFCM ms", "ParaFlux OFCM ms", "paper FCM ms", "ParaFlux FCM ms",
                     "paper CCM ms", "ParaFlux CCM ms"], "lrrrrrrr")])
    for mesh in data["meshes"]:
        m = mesh["methods"]
        if mesh["case"] == "solenoid":
            paper = (PAPER_TABLE_1["ofcm"][0], PAPER_TABLE_1["fcm"][0], PAPER_TABLE_1["ccm"][0])
        elif mesh["target_elements"] in PAPER_TABLE_3:
            paper = (*PAPER_TABLE_3[mesh["target_elements"]], None)
        else:
            continue
        lines.append(row([mesh["case"], f"{mesh['elements']:,}", paper[0], _ms(m["ofcm"]["seconds"]), paper[1],
                          _ms(m["fcm"]["seconds"]), paper[2] if paper[2] else "", _ms(m["ccm"]["seconds"])]))
    lines += ["", "The paper's Table 1 mesh of 24,106 elements is not published; the solenoid case at that size "
              "stands in for it.", ""]
    return lines


def _accumulation(data: dict) -> list[str]:
    """Atomic against coloured accumulation in the GPU solve."""
    lines = ["## EBE-J-PCG on the GPU: atomic vs coloured accumulation (fused reduction, OFCM balanced)", "",
             *table(["elements", "colours", "iterations", "atomic us/iteration", "coloured us/iteration",
                     "coloured / atomic", "atomic solve s", "coloured solve s"], "r" * 8)]
    for mesh in data["meshes"]:
        s = mesh.get("solve")
        if not s:
            continue
        a, c = s["atomic"], s["colored"]
        lines.append(row([f"{mesh['elements']:,}", s["n_colors"], a["iterations"],
                          f"{1e6 * a['seconds_per_iteration']:.1f}", f"{1e6 * c['seconds_per_iteration']:.1f}",
                          f"{c['seconds_per_iteration'] / a['seconds_per_iteration']:.2f}", f"{a['seconds']:.3g}",
                          f"{c['seconds']:.3g}"]))
    return lines


def render_markdown(data: dict) -> str:
    return page(_header_and_times(data) + _balance(data) + _against_paper(data) + _accumulation(data)
                + _per_method_solves(data) + section("Targets", _targets(data)) + section("Analysis", _analysis(data)))


def _per_method_solves(data: dict) -> list[str]:
    """Coloured / atomic time per iteration with each method's groups, as made and after balancing."""
    meshes = [r for r in data["meshes"] if r.get("solve", {}).get("per_method")]
    if not meshes:
        return []
    lines = section("Coloured accumulation with each method's colour groups", [
             "Coloured / atomic time per iteration of the same solve (fused reduction), with the groups as the "
             "method made them -> after the balancing pass; in brackets the coloured solve's microseconds per "
             "iteration after balancing.", "",
             *table(["elements", "atomic us/iteration", *METHODS], "r" * (2 + len(METHODS)))])
    for mesh in meshes:
        s = mesh["solve"]
        atomic = s["atomic"]["seconds_per_iteration"]
        cells = [f"{mesh['elements']:,}", f"{1e6 * atomic:.1f}"]
        for m in METHODS:
            made, balanced = (s["per_method"][m][k]["seconds_per_iteration"] for k in ("as_made", "balanced"))
            cells.append(f"{made / atomic:.2f} -> {balanced / atomic:.2f} ({1e6 * balanced:.1f})")
        lines.append(row(cells))
    return lines


def _targets(data: dict) -> list[str]:
    rows = data["meshes"]
    out = []
    paper_row = next((r for r in rows if r["target_elements"] == PAPER_SIZE), None)
    if paper_row:
        m = paper_row["methods"]
        speedup = m["fcm"]["seconds"] / m["ofcm"]["seconds"]
        out.append(target(f"OFCM at least 2x faster than FCM at {paper_row['elements']:,} elements: {speedup:.1f}x "
                          "(paper about 2.5x)", speedup >= 2))
        out.append(target(f"OFCM colours {paper_row['elements']:,} elements in {_ms(m['ofcm']['seconds'])} ms on one "
                          "core (well under 1 s asked; the paper needed 275 s)", m["ofcm"]["seconds"] < 1.0))
        nx = paper_row.get("networkx")
        if nx:
            ratio = nx["seconds"] / m["ofcm"]["seconds"]
            out.append(target(f"OFCM against NetworkX greedy_color at {paper_row['elements']:,} elements: "
                              f"{ratio:.0f}x faster (graph construction not counted for NetworkX)", ratio >= 10))
    colors_ok = all(r["methods"][m]["colors"] <= r["methods"]["ccm"]["colors"]
                    and r["methods"][m]["colors"] <= r["lower_bound"] + 2 for r in rows for m in ("fcm", "ofcm"))
    worst = max(r["methods"]["ofcm"]["colors"] - r["lower_bound"] for r in rows)
    out.append(target("FCM/OFCM use no more colours than CCM and at most 2 above the lower bound on every mesh "
                      f"(OFCM at most {worst} above)", colors_ok))
    ratio = max(r["methods"][m]["balanced"]["ratio"] for r in rows for m in METHODS)
    out.append(target(f"after balancing, largest / smallest group at most 1.3: worst {ratio:.2f} over all meshes "
                      "and methods", ratio <= 1.3))
    solves = [(r["elements"], r["solve"]) for r in rows if r.get("solve")]
    if solves:
        worst_n, worst_s = max(solves, key=lambda e: e[1]["colored"]["seconds_per_iteration"]
                               / e[1]["atomic"]["seconds_per_iteration"])
        r = worst_s["colored"]["seconds_per_iteration"] / worst_s["atomic"]["seconds_per_iteration"]
        out.append(target(f"coloured accumulation within 1.3x of atomic on the GPU: worst {r:.2f}x at {worst_n:,} "
                          "elements", r <= 1.3))
    return out


def _analysis(data: dict) -> list[str]:
    """Why the numbers come out as they do, with the figures taken from this run."""
    rows = data["meshes"]
    solves = [(r["elements"], r["solve"]) for r in rows if r.get("solve")]
    out = []
    big = max(rows, key=lambda r: r["elements"])
    m = big["methods"]
    out.append(
        f"- OFCM's per-node tabu bit sets make colouring an element three word reads: at {big['elements']:,} "
        f"elements it takes {_ms(m['ofcm']['seconds'])} ms against FCM's {_ms(m['fcm']['seconds'])} ms and "
        f"CCM's {_ms(m['ccm']['seconds'])} ms, with the same colours as FCM (a test checks they are identical). "
        f"The GPU's Jones-Plassmann rounds take {_ms(m['parallel-gpu']['seconds'])} ms including the element "
        "adjacency they build on the device, at one or two colours more than the sequential greedy methods "
        "(priorities are pseudo-random, not the mesh order). The NumPy version of the same rounds is the "
        "specification, not a contender.")
    out.append("- Balancing moves elements of over-full groups to the smallest group none of their neighbours "
               "uses; on these meshes it evens every method's groups to within a few elements without a new "
               "colour.")
    if solves:
        ratios = [s["colored"]["seconds_per_iteration"] / s["atomic"]["seconds_per_iteration"] for _, s in solves]
        small_n, _ = solves[0]
        large_n, _ = solves[-1]
        out.append(
            f"- Coloured accumulation costs {ratios[0]:.2f}x the atomic iteration at {small_n:,} elements and "
            f"{ratios[-1]:.2f}x at {large_n:,}, so the 1.3x target is "
            f"{'met' if max(ratios) <= 1.3 else 'missed'}. Where it costs more, two reasons: each product is one "
            "launch per colour instead of one launch, and at small sizes those launch gaps dominate an "
            "iteration of a few tens of microseconds; at large sizes each colour group is spread over the whole "
            "mesh, so every pass gathers p and read-modify-writes q on cache lines of which it uses only a few "
            "entries, where the atomic kernel walks neighbouring elements together and resolves its adds in "
            "L2. What would reach 1.3x: colour compact patches instead of single elements (a thread "
            "block per patch of neighbouring elements, accumulating in shared memory, patches coloured so that "
            "concurrent ones share no node), or one persistent kernel walking the colour offsets with a grid "
            "barrier between colours. Coloured accumulation buys bitwise reproducibility, which atomics cannot "
            "give; atomic stays the default.")
    per_method = [(n, s) for n, s in solves if s.get("per_method")]
    if per_method:
        n, s = per_method[-1]
        atomic = s["atomic"]["seconds_per_iteration"]
        ratio = {(m, k): s["per_method"][m][k]["seconds_per_iteration"] / atomic
                 for m in METHODS for k in ("as_made", "balanced")}
        best, worst = min(ratio, key=ratio.get), max(ratio, key=ratio.get)
        out.append(
            f"- With each method's own colour groups at {n:,} elements, coloured / atomic runs from "
            f"{ratio[best]:.2f}x ({best[0]}, groups {best[1].replace('_', ' ')}) to "
            f"{ratio[worst]:.2f}x ({worst[0]}, groups {worst[1].replace('_', ' ')}); OFCM's groups give "
            f"{ratio[('ofcm', 'as_made')]:.2f}x as made and {ratio[('ofcm', 'balanced')]:.2f}x balanced.")
    return out
