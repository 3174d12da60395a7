OPENQASM 2.0;
include "qelib1.inc";
gate rzx(param0) q0,q1 { h q1; cx q0,q1; rz(param0) q1; cx q0,q1; h q1; }
gate iswap q0,q1 { s q0; s q1; h q0; cx q0,q1; cx q1,q0; h q1; }
gate ryy(param0) q0,q1 { rx(pi/2) q0; rx(pi/2) q1; cx q0,q1; rz(param0) q1; cx q0,q1; rx(-pi/2) q0; rx(-pi/2) q1; }
gate layer(param0,param1) q0,q1,q2 { rzx(param0) q0,q1; ryy(param1/2) q1,q2; iswap q2,q0; }
qreg q[3];
creg meas[3];
u3(0.41,-1.2,pi/4) q[0];
u2(0,pi) q[1];
u1(-pi/8) q[2];
layer(0.3,-0.7) q[0],q[1],q[2];
layer(pi/5,2*pi/3) q[2],q[0],q[1];
barrier q[0],q[1],q[2];
measure q[0] -> meas[0];
measure q[1] -> meas[1];
measure q[2] -> meas[2];
