
.
xPlaceholder*
dtype0*
shape:


zRoundx*
T0"ª