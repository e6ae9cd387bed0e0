
.
xPlaceholder*
dtype0*
shape:

zSoftsignx*
T0"ª