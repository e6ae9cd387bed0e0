
.
xPlaceholder*
dtype0*
shape:

zFloorx*
T0"ª