
.
xPlaceholder*
dtype0*
shape:

zTanhx*
T0"ª