
.
xPlaceholder*
dtype0*
shape:
.
yPlaceholder*
dtype0*
shape:
:
eqEqualxy*
T0*
incompatible_shape_error(
=
neNotEqualxy*
T0*
incompatible_shape_error(

gtGreaterxy*
T0
!
geGreaterEqualxy*
T0

ltLessxy*
T0

le	LessEqualxy*
T0"ª