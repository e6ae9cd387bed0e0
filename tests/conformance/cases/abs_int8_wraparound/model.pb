
.
xPlaceholder*
dtype0*
shape:

zAbsx*
T0"ª