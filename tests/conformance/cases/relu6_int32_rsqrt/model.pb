
.
nPlaceholder*
dtype0*
shape:

r6Relu6n*
T0
.
xPlaceholder*
dtype0*
shape:

rRsqrtx*
T0
0
x64Placeholder*
dtype0*
shape:

r64Rsqrtx64*
T0"ª