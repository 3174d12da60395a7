OPENQASM 3.0;
include "stdgates.inc";
bit[2] c;
rz(pi/2) $0;
sx $0;
rz(pi/2) $0;
cx $0, $3;
c[0] = measure $0;
c[1] = measure $3;
