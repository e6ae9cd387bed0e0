
7
x0Placeholder*
dtype0*
shape:
7
zEinsumx0*
N*
T0*
equationabc->b"ª