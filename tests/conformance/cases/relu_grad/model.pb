
.
gPlaceholder*
dtype0*
shape:
.
xPlaceholder*
dtype0*
shape:

zReluGradgx*
T0"ª