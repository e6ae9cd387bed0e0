
.
xPlaceholder*
dtype0*
shape:

e64Erfcx*
T0
0
x32Placeholder*
dtype0*
shape:

e32Erfcx32*
T0"ª