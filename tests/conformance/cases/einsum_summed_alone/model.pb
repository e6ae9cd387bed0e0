
7
x0Placeholder*
dtype0*
shape:
3
x1Placeholder*
dtype0*
shape
:
?
zEinsumx0x1*
N*
T0*
equation
abc,cd->ad"ª