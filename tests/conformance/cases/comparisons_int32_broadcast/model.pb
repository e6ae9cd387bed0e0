
2
aPlaceholder*
dtype0*
shape
:
.
bPlaceholder*
dtype0*
shape:

gtGreaterab*
T0
3
a2Placeholder*
dtype0*
shape
:
/
b2Placeholder*
dtype0*
shape:
<
eqEquala2b2*
T0*
incompatible_shape_error("ª