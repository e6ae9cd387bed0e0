
.
xPlaceholder*
dtype0*
shape:

zSelux*
T0"ª