OPENQASM 2.0;
include "qelib1.inc";
gate majority a, b, c { cx c, b; cx c, a; ccx_free(a, b) c; }
gate ccx_free(theta, phi) t { rz(theta) t; ry(phi/2) t; }
gate twice(x) q { rx(x) q; rx(x) q; }
qreg q[3];
twice(pi/3) q;
