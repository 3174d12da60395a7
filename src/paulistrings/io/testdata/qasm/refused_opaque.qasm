OPENQASM 2.0;
include "qelib1.inc";
opaque pulse(a) q;
qreg q[1];
pulse(0.1) q[0];
