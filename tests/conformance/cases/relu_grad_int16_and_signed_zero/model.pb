
.
gPlaceholder*
dtype0*
shape:
.
xPlaceholder*
dtype0*
shape:

zReluGradgx*
T0
3
giPlaceholder*
dtype0*
shape
:
3
xiPlaceholder*
dtype0*
shape
:

ziReluGradgixi*
T0"ª