
.
xPlaceholder*
dtype0*
shape:

lLog1px*
T0
.
aPlaceholder*
dtype0*
shape:
.
bPlaceholder*
dtype0*
shape:
%
dSquaredDifferenceab*
T0"ª