
.
xPlaceholder*
dtype0*
shape:

zInvx*
T0"ª