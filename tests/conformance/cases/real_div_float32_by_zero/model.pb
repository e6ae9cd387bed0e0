
.
xPlaceholder*
dtype0*
shape:
.
yPlaceholder*
dtype0*
shape:

zRealDivxy*
T0"ª