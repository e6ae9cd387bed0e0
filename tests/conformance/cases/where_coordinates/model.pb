
2
bPlaceholder*
dtype0
*
shape
:

wbWhereb*
T0

.
xPlaceholder*
dtype0*
shape:

wxWherex*
T0
2
zPlaceholder*
dtype0*
shape
:

wzWherez*
T0"ª