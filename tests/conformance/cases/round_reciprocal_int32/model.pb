
.
rPlaceholder*
dtype0*
shape:

roundRoundr*
T0
.
nPlaceholder*
dtype0*
shape:
$

reciprocal
Reciprocaln*
T0"ª