
.
xPlaceholder*
dtype0*
shape:

zSqrtx*
T0"ª