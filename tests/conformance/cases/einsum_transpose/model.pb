
7
x0Placeholder*
dtype0*
shape:
9
zEinsumx0*
N*
T0*
equation
abc->cab"ª