
2
aPlaceholder*
dtype0	*
shape
:
2
bPlaceholder*
dtype0	*
shape
:
<
zEinsumab*
N*
T0	*
equation	ij,jk->ik"ª