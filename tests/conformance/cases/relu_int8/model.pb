
.
xPlaceholder*
dtype0*
shape:

zRelux*
T0"ª