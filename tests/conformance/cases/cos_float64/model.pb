
.
xPlaceholder*
dtype0*
shape:

zCosx*
T0"ª