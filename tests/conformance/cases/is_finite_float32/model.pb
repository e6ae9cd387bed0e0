
.
xPlaceholder*
dtype0*
shape:

zIsFinitex*
T0"ª