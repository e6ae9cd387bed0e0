
.
xPlaceholder*
dtype0*
shape:

zSinx*
T0"ª