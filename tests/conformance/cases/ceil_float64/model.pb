
.
xPlaceholder*
dtype0*
shape:

zCeilx*
T0"ª