OPENQASM 2.0;
include "qelib1.inc";
// every kind of parameter expression
qreg a[2];
qreg b[3];
u3(pi/2, -pi/4, 0.5*2) a[0];
u2(sin(0.3)+cos(pi), sqrt(2)^2) b[1];
rz(-(pi - 1e-3)/ln(exp(2))) a[1];
rxx(tan(0.1)) a[0], b[2];
cp(pi/8) b[0], b[1];
crx(0.2) a[1], b[0];
swap a[0], b[2];
sdg b; t a; tdg b[2]; sx a[1]; sxdg a[0]; id b[1];
ryy(1.5) a[0], a[1]; rzz(-0.25) b[0], b[2]; ch a[0], b[1]; cy b[1], a[1]; cz a, a;
U(0.1, 0.2, 0.3) b[0]; CX a[0], b[0];
