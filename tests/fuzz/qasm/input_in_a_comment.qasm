OPENQASM 2.0;
include "qelib1.inc";
// every kin; input float[64]of parameterO exxr(ess~iP