"""The standard utility-scale workload (added by this implementation).

``heavy_hex_127_edges()`` is the 127-qubit IBM Eagle heavy-hex coupling map (144 edges in three
edge-disjoint layers, embedded in the library), and ``kicked_ising_circuit(steps, theta_h,
theta_zz=-pi/2)`` the kicked-Ising Trotter circuit on it (Kim et al., Nature 618, 500 (2023)):
each step is ``rx(theta_h)`` on every qubit 0…126, then ``pauli_rotation("ZZ", edge, theta_zz)``
on every edge — 271 channels per step. Either angle may be a ``Parameter`` (a template circuit for
``propagate(..., sweep=)``).
"""

from __future__ import annotations

import math

from . import _core
from ._circuit import Channel, Circuit, _deferred, make_rotation
from ._parameter import Parameter
from ._util import index, real

__all__ = ["heavy_hex_127_edges", "kicked_ising_circuit"]


def heavy_hex_127_edges() -> list:
    """The 144 (q0, q1) edges of the heavy-hex map, layer by layer."""
    return [tuple(edge) for edge in _core.heavy_hex_127_edges()]


def kicked_ising_circuit(steps, theta_h, theta_zz=-math.pi / 2) -> Circuit:
    """``steps`` Trotter steps of the 127-qubit heavy-hex kicked Ising circuit."""
    if isinstance(theta_h, Parameter) or isinstance(theta_zz, Parameter):
        steps = index(steps, "steps")
        edges = _core.heavy_hex_127_edges()
        circuit = Circuit(127)
        for _ in range(steps):
            circuit._push_all([make_rotation("rx", theta_h, q) for q in range(127)])
            circuit._push_all([make_rzz(theta_zz, a, b) for a, b in edges])
        return circuit
    return Circuit._wrap(_core.kicked_ising_circuit(index(steps, "steps"), real(theta_h, "theta_h"),
                                                    real(theta_zz, "theta_zz")))


def make_rzz(theta, q0, q1) -> Channel:
    """The circuit's ZZ rotation (named ``rzz``, as the library's kicked Ising circuit names it)."""
    if isinstance(theta, Parameter):
        return _deferred(make_rzz, (theta, q0, q1))
    return Channel._wrap(_core.Channel.rzz(real(theta, "theta_zz"), q0, q1))
