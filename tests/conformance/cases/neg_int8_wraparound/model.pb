
.
xPlaceholder*
dtype0*
shape:

zNegx*
T0"ª