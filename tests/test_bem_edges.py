"""Sharp edges between prescribed displacements (engine/bem/unknowns.py): double nodes let the unknown
traction jump, so a box carrying a uniform stress solves exactly (up to quadrature) however its faces are
held; with one traction per node the edge rows were wrong by 50-80 %."""

import numpy as np

from paraflux.engine.bem.assembly import elements_of, interior_integrals
from paraflux.engine.bem.cases import pressurised_octant
from paraflux.engine.bem.direct import BoundaryData, solve_direct
from paraflux.engine.bem.kelvin import kelvin_t, kelvin_u
from paraflux.engine.bem.shapes import BOX_FACES, box_surface
from paraflux.engine.bem.unknowns import unknown_layout

E, NU = 200e9, 0.3
MU, LAM = E / (2 * (1 + NU)), E * NU / ((1 + NU) * (1 - 2 * NU))
GRADIENT = np.array([[1.0, 0.3, -0.2], [0.1, -0.5, 0.4], [0.2, 0.0, 0.7]]) * 1e-4  # u = GRADIENT x
STRAIN = (GRADIENT + GRADIENT.T) / 2
STRESS = LAM * np.trace(STRAIN) * np.eye(3) + 2 * MU * STRAIN


def uniform_stress_box(prescribed: dict, divisions=(4, 2, 2)):
    """The 2 x 1 x 1 m box under u = GRADIENT x: faces in prescribed ({face: components}) take those
    displacement components, every other component its exact traction STRESS n. Returns the surface, the
    boundary data and the exact element-node traction (M, 3, 3)."""
    s, face = box_surface((2.0, 1.0, 1.0), divisions)
    disp = np.zeros((len(s.triangles), 3), dtype=bool)
    for name, components in prescribed.items():
        disp[np.ix_(face == BOX_FACES.index(name), components)] = True
    normals = elements_of(s.points, s.triangles).normals
    exact = np.repeat((normals @ STRESS)[:, None, :], 3, axis=1)
    return s, BoundaryData(disp, s.points @ GRADIENT.T, np.where(disp[:, None, :], 0.0, exact)), exact


def errors(s, solution, exact):
    u = s.points @ GRADIENT.T
    return (np.abs(solution.displacement - u).max() / np.abs(u).max(),
            np.abs(solution.traction - exact).max() / np.abs(STRESS).max())


def test_double_nodes_sit_on_sharp_edges_between_prescribed_faces_only():
    s, data, _ = uniform_stress_box({f: [0, 1, 2] for f in BOX_FACES})
    layout = unknown_layout(s.points, s.triangles, data.displacement_type)
    on_edges = np.bincount(layout.extra_node, minlength=len(s.points))
    at_corner = (np.isin(s.points[:, 0], (0, 2)) & np.isin(s.points[:, 1], (0, 1))
                 & np.isin(s.points[:, 2], (0, 1)))
    faces_through = sum(np.isin(s.points[:, a], ends) for a, ends in enumerate(((0, 2), (0, 1), (0, 1))))
    assert np.array_equal(on_edges, np.maximum(faces_through - 1, 0)) and on_edges[at_corner].tolist() == [2] * 8
    assert not layout.idle.any() and layout.traction.all()
    x, nodes, own, _ = layout.collocation(s.points, s.triangles)
    inside = own >= 0  # each extra point lies inside its element, off the edges
    assert np.array_equal(nodes < 0, inside) and np.allclose(
        x[inside], s.points[s.triangles[own[inside]]].mean(axis=1) * 0.6 + s.points[layout.extra_node] * 0.4)
    octant, _, octant_data = pressurised_octant(300)  # rollers of different components meet: no double nodes
    assert unknown_layout(octant.points, octant.triangles, octant_data.displacement_type).n_targets == len(
        octant.points)


def test_interior_point_integrals_match_a_fine_duffy_reference():
    corners = np.array([[0.0, 0.0, 0.0], [1.0, 0.1, 0.0], [0.3, 0.9, 0.0]])
    el = elements_of(corners, np.array([[0, 1, 2]]))
    w = np.array([0.6, 0.2, 0.2])
    x = w @ corners
    h, g = interior_integrals(x[None], el, np.array([0]), w[None], MU, NU)
    gauss, gw = np.polynomial.legendre.leggauss(60)
    gauss, gw = (gauss + 1) / 2, gw / 2
    h_ref, g_ref = np.zeros((3, 3, 3)), np.zeros((3, 3, 3))
    for i in range(3):  # three triangles (x, corner i+1, corner i+2), polar about x
        a, b = (i + 1) % 3, (i + 2) % 3
        for s_, ws in zip(gauss, gw):
            for r_, wr in zip(gauss, gw):
                bary = (1 - r_) * w + r_ * ((1 - s_) * np.eye(3)[a] + s_ * np.eye(3)[b])
                y = bary @ corners
                jac = r_ * np.linalg.norm(np.cross(corners[a] - x, corners[b] - x))
                h_ref += ws * wr * jac * np.einsum("lk,a->lka", kelvin_t(y - x, el.normals[0], NU), bary - w)
                g_ref += ws * wr * jac * np.einsum("lk,a->lka", kelvin_u(y - x, MU, NU), bary)
    assert np.abs(h[0] - h_ref).max() < 1e-7 * np.abs(h_ref).max()
    assert np.abs(g[0] - g_ref).max() < 1e-7 * np.abs(g_ref).max()


def test_box_held_on_every_face_recovers_its_jumping_traction():
    s, data, exact = uniform_stress_box({f: [0, 1, 2] for f in BOX_FACES})
    du, dt = errors(s, solve_direct(s.points, s.triangles, data, E, NU), exact)
    assert du == 0.0 and dt < 2e-5  # one traction per node: 0.81


def test_fixed_face_meeting_a_roller_face_by_direct_and_fmm():
    """x = 0 fully prescribed, y = 0 on rollers along x: the x component's traction jumps along their edge
    (double nodes for one component only, idle slots for the others); every other face loaded."""
    from paraflux.engine.bem.fmm_solve import FmmSettings, solve_fmm

    s, data, exact = uniform_stress_box({"x0": [0, 1, 2], "y0": [0]})
    layout = unknown_layout(s.points, s.triangles, data.displacement_type)
    assert len(layout.extra_node) == 3 and layout.idle.sum() == 6
    du, dt = errors(s, solve_direct(s.points, s.triangles, data, E, NU), exact)
    assert du < 2e-6 and dt < 1e-5  # one traction per node: 0.51
    solution, report = solve_fmm(s.points, s.triangles, data, E, NU, FmmSettings(order=10, rtol=1e-10))
    du, dt = errors(s, solution, exact)
    assert report.extra_nodes == 3 and du < 5e-3 and dt < 2e-2  # the FMM's own error at p = 10 on 128 elements


def test_fmm_near_system_is_the_dense_system_where_every_pair_is_near(monkeypatch):
    """Every pair integrated accurately (correction ratio 100) on a box with double nodes and idle slots: the
    preconditioner's near matrix is the dense system matrix (its rigid-body blocks to the FMM's accuracy: they
    come from its unit translations), whatever the chunks of pairs; the product and the right-hand side of
    prescribed displacements and tractions follow the dense ones."""
    from paraflux.engine.bem import fmm_operator
    from paraflux.engine.bem.assembly import assemble
    from paraflux.engine.bem.direct import system_matrix

    s, face = box_surface((1.0, 0.5, 0.5), (6, 3, 3))
    disp = np.zeros((len(s.triangles), 3), dtype=bool)
    disp[face == BOX_FACES.index("x0")] = True
    disp[face == BOX_FACES.index("y0"), 0] = True  # rollers: double nodes of one component, idle slots
    traction = np.zeros((len(s.triangles), 3, 3))
    traction[face == BOX_FACES.index("x1")] = [1e6, 2e5, -3e5]
    layout = unknown_layout(s.points, s.triangles, disp)
    assert len(layout.extra_node) > 0 and layout.idle.any()
    mu, nu, n, t = 1e11, 0.3, len(s.points), layout.n_targets
    direct = assemble(s.points, s.triangles, layout, disp, traction, mu, nu)
    a = system_matrix(direct.h, direct.g, layout, mu)
    u_known = np.random.default_rng(1).standard_normal((n, 3))
    ops = []
    for chunk in (fmm_operator.PAIR_CHUNK, 37):  # one chunk, then chunks ending inside the targets' range
        monkeypatch.setattr(fmm_operator, "PAIR_CHUNK", chunk)
        ops.append(fmm_operator.FmmBemOperator(s.points, s.triangles, layout, disp, traction, mu, nu, order=10,
                                               correction_ratio=100.0, known_displacement=u_known))
    near = ops[0].near.toarray()
    assert np.array_equal(near, ops[1].near.toarray())
    assert np.array_equal(ops[0].correction.toarray(), ops[1].correction.toarray())
    rigid = np.zeros((t, t), dtype=bool)  # the rigid-body terms' blocks: a node's own, an extra point's element
    rigid[np.arange(n), np.arange(n)] = True
    rigid[n + np.arange(t - n)[:, None], s.triangles[layout.extra_element]] = True
    rigid = np.kron(rigid, np.ones((3, 3), dtype=bool))
    scale = np.abs(a).max()
    assert np.abs(near - a)[~rigid].max() < 1e-12 * scale
    assert np.abs(near - a)[rigid].max() < 1e-3 * scale
    x = np.random.default_rng(0).standard_normal(3 * t)
    assert np.linalg.norm(ops[1].apply(x) - a @ x) < 5e-4 * np.linalg.norm(a @ x)
    b = np.where(layout.idle.reshape(-1), 0.0,
                 direct.b_t - direct.h @ np.where(layout.displacement, 0.0, u_known).ravel())
    assert np.linalg.norm(ops[1].known_part() - b) < 5e-4 * np.linalg.norm(b)
