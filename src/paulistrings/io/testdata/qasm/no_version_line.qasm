include "qelib1.inc";
qreg q[3];
h q[0];
cx q[0],q[1];
ccx q[0],q[1],q[2];
