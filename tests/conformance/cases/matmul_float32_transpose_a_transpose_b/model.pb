
2
aPlaceholder*
dtype0*
shape
:
2
bPlaceholder*
dtype0*
shape
:
@
zMatMulab*
T0*
transpose_a(*
transpose_b("ª