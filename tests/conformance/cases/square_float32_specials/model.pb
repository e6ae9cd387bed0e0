
.
xPlaceholder*
dtype0*
shape:

zSquarex*
T0"ª