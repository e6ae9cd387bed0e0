
.
xPlaceholder*
dtype0*
shape:

z
Reciprocalx*
T0"ª