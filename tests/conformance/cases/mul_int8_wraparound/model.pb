
.
xPlaceholder*
dtype0*
shape:
.
yPlaceholder*
dtype0*
shape:

zMulxy*
T0"ª