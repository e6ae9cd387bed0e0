
.
xPlaceholder*
dtype0*
shape:

zLogx*
T0"ª