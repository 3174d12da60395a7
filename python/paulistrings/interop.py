"""Importers: task JSON (schema v1), stim circuits, OpenQASM 2 and qiskit circuits.

- ``load_task(path_or_dict)`` → ``Task`` and ``circuit_from_json(obj, n_qubits, *, base_dir=None)``
  read the original's task-JSON schema v1 (plus this project's extensions) with the same reader
  as the ``paulistrings`` command line, so Python and the CLI run a task file identically.
- ``circuit_from_stim(src)`` → ``(Circuit, PauliSum | None)`` from stim program text, a path or a
  ``stim.Circuit``; stim itself is not needed for text and paths. ``REPEAT`` blocks are flattened;
  anything a propagator cannot represent (measurements, resets, detectors, record targets, …) is
  a ``ValueError`` naming file, line and column — never skipped.
- ``circuit_from_qasm(src, *, num_qubits=None)`` (added here) reads OpenQASM 2.0 over qelib1.inc.
- ``circuit_from_qiskit(qc)`` and ``stabilizers_from_stim(src, *, num_qubits=None)`` need qiskit
  and stim respectively (imported lazily; ``ImportError`` with a message when missing).

Pauli convention: a coefficient multiplies the Hermitian Pauli string (Y = (x=1, z=1), no phase),
the same as stim's, so ``S X S† = +Y`` here and in stim.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import numpy as np

from . import _core
from . import truncation as _truncation
from ._circuit import Channel, Circuit
from ._sum import PauliSum
from ._util import index, real, type_name

__all__ = [
    "Task",
    "load_task",
    "circuit_from_json",
    "circuit_from_stim",
    "circuit_from_qasm",
    "circuit_from_qiskit",
    "qasm_registers",
    "stabilizers_from_stim",
]


# =============================================================================
# task JSON
# =============================================================================


@dataclass(frozen=True)
class Task:
    """A parsed task file (schema v1). ``raw`` is the parsed JSON object as given.

    ``observable`` is the task's ``"observable"`` (or a ``stim_file``'s OBSERVABLE_INCLUDE) as a
    ``PauliSum`` (else the first of the extension's named ``"observables"``), or ``None``; ``truncation`` is ``weight(max_weight) & coeff(min_abs_coeff)``
    (whichever are given) or ``None``; ``state`` is ``run.state`` or ``None``; ``threads``
    defaults to 1. Added here: ``observables``, every named observable (``"observable"`` and the
    extension key ``"observables"``) as ``{name: PauliSum}``.
    """

    n_qubits: int
    circuit: Circuit
    observable: Optional[PauliSum]
    truncation: Any
    direction: str
    threads: int
    state: Optional[str]
    raw: dict = field(default_factory=dict)
    observables: dict = field(default_factory=dict)


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    raise TypeError(f"task JSON: value of type {type_name(value)} is not JSON-serializable")


def _observable(terms, num_qubits: int) -> PauliSum:
    labels = [label for label, _ in terms]
    values = [complex(c) for _, c in terms]
    return PauliSum.from_strings(labels, values, num_qubits=num_qubits)


def _policy(raw_truncation) -> Optional[_truncation.Truncation]:
    if not isinstance(raw_truncation, dict):
        return None
    parts = []
    if "max_weight" in raw_truncation:
        parts.append(_truncation.weight(raw_truncation["max_weight"]))
    if "min_abs_coeff" in raw_truncation:
        parts.append(_truncation.coeff(raw_truncation["min_abs_coeff"]))
    if "top_n" in raw_truncation:
        parts.append(_truncation.topn(raw_truncation["top_n"]))
    if "approx_top_n" in raw_truncation:
        parts.append(_truncation.approx_topn(raw_truncation["approx_top_n"]))
    if not parts:
        return None
    policy = parts[0]
    for part in parts[1:]:
        policy = policy & part
    return policy


def load_task(path) -> Task:
    """Load a task-JSON file (schema v1 and this project's extensions), or an already-parsed dict.

    Unknown keys, unknown gates, missing or ill-typed fields are ``ValueError``s naming the field
    (``"task.json: circuit.gates[3].theta: expected a number"``); ``run.direction`` is required.
    """
    if isinstance(path, dict):
        raw = path
        text = json.dumps(raw, default=_json_default)
        parsed = _core.parse_task(text, "<task>", Path("."))
    else:
        file = Path(os.fspath(path))
        text = file.read_text()
        try:
            raw = json.loads(text)
        except json.JSONDecodeError:
            raw = None  # the reader below reports the error with its location
        parsed = _core.parse_task(text, str(file), file.parent if str(file.parent) else Path("."))
    n = parsed["num_qubits"]
    observables = {name: _observable(terms, n) for name, terms in parsed["observables"]}
    run = raw.get("run", {}) if isinstance(raw, dict) else {}
    return Task(
        n_qubits=n,
        circuit=Circuit._wrap(parsed["circuit"]),
        observable=observables.get("observable", next(iter(observables.values()), None)),
        truncation=_policy(raw.get("truncation")) if isinstance(raw, dict) else None,
        direction=parsed["direction"],
        threads=run.get("threads", 1) if isinstance(run, dict) else 1,
        state=run.get("state") if isinstance(run, dict) else None,
        raw=raw if isinstance(raw, dict) else {},
        observables=observables,
    )


def circuit_from_json(obj, n_qubits, *, base_dir=None) -> Circuit:
    """A ``Circuit`` from a task's ``"circuit"`` object: ``{"gates": [...]}`` (gate dicts in the
    schema-v1 vocabulary, as ``Circuit.gates`` writes them) or ``{"stim_file": "path.stim"}``
    (relative to ``base_dir``, default the current directory)."""
    if not isinstance(obj, dict):
        raise ValueError(f"circuit_from_json: the circuit object must be a dict, got {type_name(obj)}")
    task = {"version": 1, "n_qubits": n_qubits, "circuit": obj, "run": {"direction": "forward"}}
    text = json.dumps(task, default=_json_default)
    base = Path(os.fspath(base_dir)) if base_dir is not None else Path(".")
    return Circuit._wrap(_core.parse_task(text, "<circuit>", base)["circuit"])


# =============================================================================
# stim and OpenQASM text
# =============================================================================


def _is_stim_object(src, name: str) -> bool:
    cls = type(src)
    return cls.__module__.split(".")[0] == "stim" and cls.__name__ == name


def _source(src, what: str):
    """(text, None) for program text, (None, path) for a file."""
    if isinstance(src, os.PathLike):
        path = os.fspath(src)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"{what}: no such file: {path!r}")
        return None, path
    if isinstance(src, str):
        if "\n" not in src and len(src) < 4096 and os.path.isfile(src):
            return None, src
        return src, None
    raise TypeError(f"{what} expects program text or a path (str / os.PathLike), got {type_name(src)}")


def circuit_from_stim(src):
    """``(Circuit, PauliSum | None)`` from a stim program: text, a path, or a ``stim.Circuit``.

    H S S_DAG X Y Z, CX/CNOT CZ SWAP (and CY), DEPOLARIZE1/2, X_ERROR/Y_ERROR/Z_ERROR map to
    gates and noise; measurements and resets whose results are not used become channels (M MZ MX MY,
    MR MRX MRY, R RX RY, MXX MYY MZZ, MPP); I, TICK, QUBIT_COORDS, SHIFT_COORDS, MPAD and DETECTOR are
    skipped; OBSERVABLE_INCLUDE with Pauli targets builds the returned observable (one term per
    instruction, coefficient 1, duplicates adding up; ``None`` when there is none). Everything else
    (record-controlled gates, record observables, correlated errors, …) is a ``ValueError``.
    """
    if _is_stim_object(src, "Circuit"):
        circuit, terms = _core.read_stim(str(src), "<stim.Circuit>", None)
    else:
        text, path = _source(src, "circuit_from_stim")
        circuit, terms = _core.read_stim(text, "<stim>", None) if path is None else _core.load_stim(path, None)
    observable = _observable(terms, circuit.num_qubits) if terms else None
    return Circuit._wrap(circuit), observable


def _qasm_inputs(params) -> dict:
    """``params`` as the reader takes them: names to finite reals (numbers, not text)."""
    if params is None:
        return {}
    if not isinstance(params, Mapping):
        raise TypeError(f"params: expected a mapping of input names to numbers, got {type_name(params)}")
    inputs = {}
    for name, value in params.items():
        if not isinstance(name, str):
            raise TypeError(f"params: input names are strings, got {type_name(name)}")
        v = real(value, f"params[{name!r}]")
        if not math.isfinite(v):
            raise ValueError(f"params[{name!r}]: {v!r} is not a finite number")
        inputs[name] = v
    return inputs


def _qasm_program(src, num_qubits, params):
    text, path = _source(src, "circuit_from_qasm")
    n = None if num_qubits is None else index(num_qubits, "num_qubits")
    inputs = _qasm_inputs(params)
    if path is None:
        core, registers, notes = _core.read_qasm_program(text, "<qasm>", n, inputs)
    else:
        core, registers, notes = _core.load_qasm_program(path, n, inputs)
    for note in notes:
        warnings.warn(note, stacklevel=3)
    return Circuit._wrap(core), registers


def circuit_from_qasm(src, *, num_qubits=None, params=None) -> Circuit:
    """A ``Circuit`` from an OpenQASM 2 program, or a program in the OpenQASM 3 subset that Qiskit's
    ``qasm3.dumps`` writes (text or path).

    Every gate of qelib1.inc (and stdgates.inc) is applied exactly; ``measure`` and ``reset`` become
    channels (a measurement whose outcome is not used removes the Pauli strings that anticommute with
    it); ``barrier`` is skipped. Registers are laid out in declaration order; ``num_qubits`` (at least
    their total) widens the circuit. ``params`` gives the values of OpenQASM 3 ``input`` parameters.
    Classical control (``if``), ``opaque`` gates and OpenQASM 3 control flow are ``ValueError``s with
    the file, line and column. A program without a version line is read as OpenQASM 2.0 with a warning.
    """
    return _qasm_program(src, num_qubits, params)[0]


def qasm_registers(src, *, params=None) -> dict:
    """``{register: [global qubit indices]}`` of an OpenQASM program's qubit registers (declaration
    order lays them out one after another), for naming qubits as ``q[3]`` in observables."""
    _, registers = _qasm_program(src, None, params)
    return {name: list(range(offset, offset + size)) for name, offset, size in registers}


# =============================================================================
# qiskit
# =============================================================================

_QISKIT_NAMED_1Q = {"h", "s", "sdg", "x", "y", "z"}
_QISKIT_ROTATION_1Q = {"rz", "rx", "ry"}
_QISKIT_NAMED_2Q = {"cx": "cnot", "cz": "cz", "swap": "swap"}
_QISKIT_ROTATION_2Q = {"rzz": "ZZ", "rxx": "XX", "ryy": "YY"}


def _operator_matrix(operation) -> np.ndarray:
    try:
        from qiskit.quantum_info import Operator
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("circuit_from_qiskit needs qiskit (pip install qiskit)") from e
    try:
        return np.asarray(Operator(operation).data, dtype=complex)
    except Exception as e:
        raise ValueError(
            f"circuit_from_qiskit: cannot turn instruction {operation.name!r} into a unitary matrix: {e}"
        ) from e


_QISKIT_LIBRARY_3Q = {"ccx": "ccx", "toffoli": "ccx", "cswap": "cswap", "fredkin": "cswap", "rccx": "rccx",
                      "rcccx": "rc3x", "rc3x": "rc3x", "c3x": "c3x", "c4x": "c4x", "c3sx": "c3sqrtx",
                      "c3sqrtx": "c3sqrtx"}
_QISKIT_SKIPPED = {"barrier", "delay", "id", "global_phase"}
_QISKIT_CONTROL_FLOW = {"if_else", "while_loop", "for_loop", "switch_case", "break_loop", "continue_loop", "box"}
_X = np.array([[0, 1], [1, 0]], dtype=complex)
_Z = np.diag([1, -1]).astype(complex)


def _negated_controls(operation, k: int) -> list:
    """Per control, whether it acts on |0⟩ (qiskit's ctrl_state: bit i = the state of control i)."""
    state = getattr(operation, "ctrl_state", None)
    if state is None:
        return [False] * k
    if isinstance(state, str):
        state = int(state, 2)
    return [not (int(state) >> i) & 1 for i in range(k)]


def _controlled_channels(name, operation, qubits):
    """Channels of a gate on three or more qubits, or None when it is not one this knows."""
    params = [float(v) for v in getattr(operation, "params", [])]
    if name in _QISKIT_LIBRARY_3Q:
        return _core.standard_gate_channels(_QISKIT_LIBRARY_3Q[name], params, qubits)
    k = getattr(operation, "num_ctrl_qubits", None)
    if k is None or len(qubits) - int(k) not in (1, 2):
        return None
    k = int(k)
    if name.startswith("mcx"):
        core = _X
    elif name == "ccz":
        core = _Z
    elif name in ("mcphase", "mcp", "mcu1"):
        core = np.diag([1, np.exp(1j * params[0])]).astype(complex)
    elif getattr(operation, "base_gate", None) is not None:
        core = _operator_matrix(operation.base_gate)
        if core.shape == (4, 4):
            order = [0, 2, 1, 3]  # qiskit's |t1 t0> basis → |t0 t1>
            core = core[np.ix_(order, order)]
    else:
        return None
    if core.shape not in ((2, 2), (4, 4)) or len(qubits) != k + int(round(np.log2(core.shape[0]))):
        return None
    negated = _negated_controls(operation, k)
    return _core.controlled_gate_channels(negated, [complex(v) for v in core.reshape(-1)], qubits)


def circuit_from_qiskit(qc) -> Circuit:
    """A ``Circuit`` from a ``qiskit.QuantumCircuit``.

    h s sdg x y z, rz rx ry, cx (→ cnot), cz, swap and rzz/rxx/ryy (→ ``pauli_rotation``) map by
    name; any other one- or two-qubit gate goes through its ``Operator`` matrix to
    ``unitary_1q``/``unitary_2q`` (qiskit's little-endian two-qubit basis is reordered so that
    the first qubit is the more significant factor, as ``unitary_2q`` expects). Gates on three or
    more qubits — ccx cswap rccx rcccx c3x c4x c3sx, mcx with its controls, ccz, mcphase and any
    controlled gate whose base acts on one or two qubits (negative controls included) — are applied
    exactly (docs/design.md, "Circuit files"). ``measure`` and ``reset`` become channels;
    ``barrier``, ``delay`` and ``id`` are skipped; classically conditioned instructions and control
    flow are ``ValueError``s, as are other gates on more than two qubits. Qubit k is
    ``qc.find_bit(q).index``.
    """
    circuit = Circuit(qc.num_qubits)
    for position, instruction in enumerate(qc.data):
        operation = instruction.operation
        name = operation.name
        if name in _QISKIT_SKIPPED:
            continue
        if getattr(operation, "condition", None) is not None or name in _QISKIT_CONTROL_FLOW:
            raise ValueError(
                f"circuit_from_qiskit: instruction {position} ({name!r}) is classically controlled, "
                "which a propagator cannot represent"
            )
        qubits = [qc.find_bit(q).index for q in instruction.qubits]
        if name == "measure":
            circuit.measure(qubits)
            continue
        if name == "reset":
            circuit.reset(qubits)
            continue
        if len(qubits) > 2:
            channels = _controlled_channels(name, operation, qubits)
            if channels is None:
                raise ValueError(
                    f"circuit_from_qiskit: instruction {position} ({name!r}) acts on {len(qubits)} qubits and is "
                    "not a controlled gate with a one- or two-qubit base (decompose it first)"
                )
            circuit._push_all([Channel._wrap(ch) for ch in channels])
            continue
        params = [float(v) for v in getattr(operation, "params", [])] if name in (
            _QISKIT_ROTATION_1Q | set(_QISKIT_ROTATION_2Q)) else []
        if name in _QISKIT_NAMED_1Q:
            getattr(circuit, name)(qubits[0])
        elif name in _QISKIT_ROTATION_1Q:
            getattr(circuit, name)(params[0], qubits[0])
        elif name in _QISKIT_NAMED_2Q:
            getattr(circuit, _QISKIT_NAMED_2Q[name])(qubits[0], qubits[1])
        elif name in _QISKIT_ROTATION_2Q:
            circuit.pauli_rotation(_QISKIT_ROTATION_2Q[name], qubits, params[0])
        elif len(qubits) == 1:
            circuit.unitary_1q(qubits[0], _operator_matrix(operation))
        else:
            m = _operator_matrix(operation)
            order = [0, 2, 1, 3]  # qiskit's |q1 q0> basis → |q0 q1>
            circuit.unitary_2q(qubits[0], qubits[1], m[np.ix_(order, order)])
    return circuit


# =============================================================================
# stim stabilizer states
# =============================================================================


def stabilizers_from_stim(src, *, num_qubits=None) -> list:
    """Signed stabilizer generators (``"+XX"``, ``"-ZI"``, …) of a Clifford state, for
    ``PauliSum.expectation_stabilizer``.

    ``src`` is a ``stim.Tableau`` (its Z-output images), a ``stim.TableauSimulator`` (its
    canonical stabilizers) or a ``stim.Circuit`` / program text / path (through
    ``to_tableau()``). ``num_qubits`` pads extra qubits with ``+Z`` (left in |0⟩); fewer qubits
    than the tableau has is a ``ValueError``. Needs stim.
    """
    try:
        import stim
    except ImportError as e:
        raise ImportError("stabilizers_from_stim needs stim (pip install stim)") from e
    if isinstance(src, stim.Tableau):
        paulis = [src.z_output(k) for k in range(len(src))]
    elif isinstance(src, stim.TableauSimulator):
        paulis = list(src.canonical_stabilizers())
    elif isinstance(src, stim.Circuit):
        tableau = src.to_tableau()
        paulis = [tableau.z_output(k) for k in range(len(tableau))]
    elif isinstance(src, (str, os.PathLike)):
        text, path = _source(src, "stabilizers_from_stim")
        program = stim.Circuit.from_file(path) if path is not None else stim.Circuit(text)
        tableau = program.to_tableau()
        paulis = [tableau.z_output(k) for k in range(len(tableau))]
    else:
        raise TypeError(
            "stabilizers_from_stim expects a stim.Tableau, stim.TableauSimulator, stim.Circuit, "
            f"or stim program text / path; got {type_name(src)}"
        )
    count = len(paulis)
    width = count if num_qubits is None else index(num_qubits, "num_qubits")
    if width < count:
        raise ValueError(
            f"stabilizers_from_stim: num_qubits={width} is smaller than the {count} qubits of the "
            "tableau; dropping generators would change the state"
        )
    generators = []
    for k, ps in enumerate(paulis):
        if ps.sign == 1:
            sign = "+"
        elif ps.sign == -1:
            sign = "-"
        else:
            raise ValueError(f"stabilizers_from_stim: generator {k} has the non-Hermitian sign {ps.sign!r}")
        letters = "".join("IXYZ"[ps[q]] for q in range(len(ps)))
        generators.append(sign + letters + "I" * (width - len(letters)))
    for q in range(count, width):
        generators.append("+" + "I" * q + "Z" + "I" * (width - q - 1))
    return generators
