
.
xPlaceholder*
dtype0*
shape:

zIsNanx*
T0"ª