OPENQASM 3.0;
include "stdgates.inc";
gate rzx(_gate_p_0) _gate_q_0, _gate_q_1 {
  h _gate_q_1;
  cx _gate_q_0, _gate_q_1;
  rz(_gate_p_0) _gate_q_1;
  cx _gate_q_0, _gate_q_1;
  h _gate_q_1;
}
gate ecr _gate_q_0, _gate_q_1 {
  rzx(pi/4) _gate_q_0, _gate_q_1;
  x _gate_q_0;
  rzx(-pi/4) _gate_q_0, _gate_q_1;
}
bit[3] meas;
qubit[3] q;
sx q[0];
ecr q[0], q[1];
ctrl @ rzx(0.3) q[2], q[1], q[0];
inv @ ecr q[1], q[0];
pow(0.5) @ x q[1];
negctrl @ h q[0], q[1];
reset q[0];
meas = measure q;
