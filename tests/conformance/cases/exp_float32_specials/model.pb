
.
xPlaceholder*
dtype0*
shape:

zExpx*
T0"ª