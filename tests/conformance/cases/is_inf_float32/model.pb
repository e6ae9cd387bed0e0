
.
xPlaceholder*
dtype0*
shape:

zIsInfx*
T0"ª