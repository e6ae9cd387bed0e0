
.
xPlaceholder*
dtype0*
shape:

zSignx*
T0
.
nPlaceholder*
dtype0*
shape:

ziSignn*
T0"ª